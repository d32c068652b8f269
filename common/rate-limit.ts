// The LLM rate limiter's grant logic, pure: the limiter workflow (workflows/llm-limiter.ts) keeps
// one LimiterState per model and calls these functions with its workflow clock; unit tests call
// them with hand-made clocks. Rules:
//  - FIFO: requests are granted strictly in arrival order; a request that does not fit blocks the
//    ones behind it, so a large request is never overtaken forever (no starvation).
//  - A lease counts its reserved tokens and one request in the one-minute window from the moment
//    it is granted; an open lease holds its reservation even past the minute (its tokens will be
//    spent), and a released lease counts what it really used (the unused part comes back).
//  - A lease not released within its TTL expires (its holder died): it stops holding anything past
//    the minute, and counts its full reservation inside it (the provider may have charged it).
//  - A pause (a provider's 429 with Retry-After) stops every grant until it ends.
//  - A request larger than the whole token limit is granted alone, when nothing else is counted.

export const WINDOW_MS = 60_000;
/** Closed leases and waits remembered for the statistics (the query): bounded, like the history. */
const RECENT_WAITS = 200;

export interface RateLimits {
  /** Tokens per minute; 0 = no token limit. */
  tokens_per_minute: number;
  /** Requests per minute; 0 = no request limit. */
  requests_per_minute: number;
  /** Leases open at once; 0 = no limit. */
  max_in_flight: number;
  /** A lease not released after this long is expired. */
  lease_ttl_ms: number;
}

export interface LeaseRequest {
  /** Unique per decision attempt; asking again with the same id is answered with the same lease. */
  id: string;
  /** Who asks (the worker's identity and the activity), shown by `agent limits`. */
  holder: string;
  /** Tokens reserved: the prompt estimate plus the completion cap. */
  tokens: number;
}

export interface Waiter extends LeaseRequest {
  queued_at: number;
}

export type LeaseStatus = 'open' | 'released' | 'expired';

export interface Lease {
  id: string;
  holder: string;
  reserved: number;
  /** Set on release: what the call really used (prompt + completion). */
  used?: number;
  granted_at: number;
  expires_at: number;
  waited_ms: number;
  status: LeaseStatus;
}

export interface LimiterTotals {
  granted: number;
  granted_tokens: number;
  released: number;
  used_tokens: number;
  expired: number;
  pauses: number;
}

export interface LimiterState {
  limits: RateLimits;
  queue: Waiter[];
  /** Open leases, and closed ones still inside the window. */
  leases: Lease[];
  paused_until: number;
  totals: LimiterTotals;
  /** The waits of the most recent grants, in ms (for the median and p95 `agent limits` shows). */
  recent_waits: number[];
}

export interface WindowUsage {
  tokens: number;
  requests: number;
  in_flight: number;
  in_flight_tokens: number;
}

export function newLimiterState(limits: RateLimits): LimiterState {
  return {
    limits,
    queue: [],
    leases: [],
    paused_until: 0,
    totals: { granted: 0, granted_tokens: 0, released: 0, used_tokens: 0, expired: 0, pauses: 0 },
    recent_waits: [],
  };
}

/** One-line error for limits that cannot work; undefined when they are fine. */
export function invalidLimits(limits: RateLimits): string | undefined {
  for (const key of ['tokens_per_minute', 'requests_per_minute', 'max_in_flight'] as const) {
    const v = limits[key];
    if (!Number.isSafeInteger(v) || v < 0) return `${key} must be a non-negative integer, got ${v}`;
  }
  if (!Number.isFinite(limits.lease_ttl_ms) || limits.lease_ttl_ms <= 0)
    return `lease_ttl_ms must be positive, got ${limits.lease_ttl_ms}`;
  return undefined;
}

export function invalidRequest(req: LeaseRequest): string | undefined {
  if (typeof req.id !== 'string' || req.id === '' || req.id.length > 500) return 'a lease request needs an id';
  if (!Number.isSafeInteger(req.tokens) || req.tokens < 0) return `tokens must be a non-negative integer`;
  return undefined;
}

/** Queues a request (idempotent: an id already queued or leased is left where it is). */
export function enqueue(state: LimiterState, req: LeaseRequest, now: number): void {
  if (state.queue.some((w) => w.id === req.id) || state.leases.some((l) => l.id === req.id)) return;
  state.queue.push({ id: req.id, holder: String(req.holder).slice(0, 200), tokens: req.tokens, queued_at: now });
}

/** The lease granted to this request id, if any (open or not). */
export function leaseOf(state: LimiterState, id: string): Lease | undefined {
  return state.leases.find((l) => l.id === id);
}

/** Marks the leases past their TTL expired and forgets closed leases that left the window. */
export function expireLeases(state: LimiterState, now: number): void {
  for (const lease of state.leases) {
    if (lease.status === 'open' && now >= lease.expires_at) {
      lease.status = 'expired';
      state.totals.expired++;
    }
  }
  state.leases = state.leases.filter((l) => l.status === 'open' || now < l.granted_at + WINDOW_MS);
}

/** What counts against the limits now. */
export function windowUsage(state: LimiterState, now: number): WindowUsage {
  const usage: WindowUsage = { tokens: 0, requests: 0, in_flight: 0, in_flight_tokens: 0 };
  for (const lease of state.leases) {
    const inWindow = now < lease.granted_at + WINDOW_MS;
    // Past its TTL an open lease is expired, whether or not expireLeases ran yet.
    if (lease.status === 'open' && now < lease.expires_at) {
      usage.in_flight++;
      usage.in_flight_tokens += lease.reserved;
      usage.tokens += lease.reserved;
      usage.requests++;
    } else if (inWindow) {
      usage.tokens += lease.status === 'released' ? (lease.used ?? 0) : lease.reserved;
      usage.requests++;
    }
  }
  return usage;
}

/** Whether a request of `tokens` fits the limits now, given the usage. */
export function fits(limits: RateLimits, usage: WindowUsage, tokens: number): boolean {
  const tpm = limits.tokens_per_minute;
  // An oversized request would never fit: it goes alone, when nothing else is counted.
  const tokensOk = tpm === 0 || usage.tokens + tokens <= tpm || usage.tokens === 0;
  const requestsOk = limits.requests_per_minute === 0 || usage.requests < limits.requests_per_minute;
  const inFlightOk = limits.max_in_flight === 0 || usage.in_flight < limits.max_in_flight;
  return tokensOk && requestsOk && inFlightOk;
}

/** Grants what fits, head of the queue first; returns the new leases. */
export function grantReady(state: LimiterState, now: number): Lease[] {
  expireLeases(state, now);
  const granted: Lease[] = [];
  if (now < state.paused_until) return granted;
  const usage = windowUsage(state, now);
  while (state.queue.length > 0) {
    const head = state.queue[0]!;
    if (!fits(state.limits, usage, head.tokens)) break;
    state.queue.shift();
    const lease: Lease = {
      id: head.id,
      holder: head.holder,
      reserved: head.tokens,
      granted_at: now,
      expires_at: now + state.limits.lease_ttl_ms,
      waited_ms: Math.max(0, now - head.queued_at),
      status: 'open',
    };
    state.leases.push(lease);
    usage.tokens += lease.reserved;
    usage.requests++;
    usage.in_flight++;
    usage.in_flight_tokens += lease.reserved;
    state.totals.granted++;
    state.totals.granted_tokens += lease.reserved;
    state.recent_waits.push(lease.waited_ms);
    if (state.recent_waits.length > RECENT_WAITS) state.recent_waits.shift();
    granted.push(lease);
  }
  return granted;
}

/**
 * The holder is done: the lease counts what the call used from now on (the unused part of the
 * reservation comes back). An expired lease is corrected too; an unknown id is ignored (it left the
 * window already, or the release was repeated).
 */
export function release(state: LimiterState, id: string, usedTokens: number, now: number): void {
  const lease = leaseOf(state, id);
  const used = Number.isSafeInteger(usedTokens) && usedTokens >= 0 ? usedTokens : (lease?.reserved ?? 0);
  if (!lease || lease.status === 'released') return;
  if (lease.status === 'open') state.totals.released++;
  lease.status = 'released';
  lease.used = used;
  state.totals.used_tokens += used;
  expireLeases(state, now);
}

/** A provider's 429 with Retry-After: no grants for anyone until `until`. */
export function pause(state: LimiterState, until: number): void {
  if (until > state.paused_until) {
    state.paused_until = until;
    state.totals.pauses++;
  }
}

/** A queued request gives up (its activity was cancelled or timed out). */
export function withdraw(state: LimiterState, id: string): void {
  state.queue = state.queue.filter((w) => w.id !== id);
}

/**
 * When, with no message arriving, the next grant could become possible (a pause ends, a lease
 * expires, a lease leaves the window); undefined when nothing waits or nothing would change.
 */
export function nextWakeAt(state: LimiterState, now: number): number | undefined {
  if (state.queue.length === 0) return undefined;
  if (now < state.paused_until) return state.paused_until;
  let next: number | undefined;
  const consider = (t: number) => {
    if (t > now && (next === undefined || t < next)) next = t;
  };
  for (const lease of state.leases) {
    if (lease.status === 'open') consider(lease.expires_at);
    else consider(lease.granted_at + WINDOW_MS);
  }
  return next;
}

/** What `agent limits` and the limiter's query show. */
export interface LimiterSnapshot {
  limits: RateLimits;
  /** This minute: what counts against the limits. */
  window: { tokens: number; requests: number };
  in_use: { leases: number; tokens: number };
  queued: { requests: number; tokens: number; oldest_wait_ms: number };
  granted: LimiterTotals;
  wait_ms: { median: number; p95: number; max: number; samples: number };
  paused_until: string | null;
  holders: Array<{ holder: string; leases: number; tokens: number }>;
}

export function snapshot(state: LimiterState, now: number): LimiterSnapshot {
  // The query must not change state: work on a copy of what expiry would touch.
  const copy: LimiterState = { ...state, leases: state.leases.map((l) => ({ ...l })), totals: { ...state.totals } };
  expireLeases(copy, now);
  const usage = windowUsage(copy, now);
  const waits = [...copy.recent_waits].sort((a, b) => a - b);
  const rank = (p: number) => waits[Math.min(waits.length - 1, Math.ceil(p * waits.length) - 1)] ?? 0;
  const holders = new Map<string, { leases: number; tokens: number }>();
  for (const lease of copy.leases.filter((l) => l.status === 'open')) {
    const h = holders.get(lease.holder) ?? { leases: 0, tokens: 0 };
    h.leases++;
    h.tokens += lease.reserved;
    holders.set(lease.holder, h);
  }
  return {
    limits: copy.limits,
    window: { tokens: usage.tokens, requests: usage.requests },
    in_use: { leases: usage.in_flight, tokens: usage.in_flight_tokens },
    queued: {
      requests: copy.queue.length,
      tokens: copy.queue.reduce((n, w) => n + w.tokens, 0),
      oldest_wait_ms: copy.queue.length > 0 ? Math.max(0, now - copy.queue[0]!.queued_at) : 0,
    },
    granted: copy.totals,
    wait_ms: { median: rank(0.5), p95: rank(0.95), max: waits[waits.length - 1] ?? 0, samples: waits.length },
    paused_until: now < copy.paused_until ? new Date(copy.paused_until).toISOString() : null,
    holders: [...holders].map(([holder, h]) => ({ holder, ...h })),
  };
}
