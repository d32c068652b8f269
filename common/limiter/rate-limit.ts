// The LLM rate limiter's grant logic, pure: the limiter workflow (workflows/limiter/llm-limiter.ts) keeps
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
//  - A request can only tighten the limits the limiter was started with, never loosen them.
//  - A request for more tokens than the minute's token limit is refused: it could never fit.
//  - A queued request larger than the token limit (tightened after it queued) is granted alone,
//    when nothing else is counted.

export const WINDOW_MS = 60_000;
/**
 * Closed leases are summed per second of their grant: the window is at most 61 counters whatever
 * the traffic. A counter leaves the window a minute after the latest grant it holds, so a lease
 * counts up to a second longer than its own minute (never shorter: the limit holds).
 */
export const BUCKET_MS = 1000;
/** Request ids the limiter accepts: printable ASCII, at most this long (the worker sends a UUID). */
export const MAX_ID_CHARS = 64;
/** A holder's name is cut to this length (a worker's `<pid>@<host>`). */
export const MAX_HOLDER_CHARS = 64;
/** Leases open at once, whatever max_in_flight says: bounds what the limiter carries. */
export const MAX_OPEN_LEASES = 1000;
/** Requests waiting at once; the next one is refused until the queue shortens. */
export const MAX_QUEUED = 1000;
/** The longest lease TTL the limiter takes (a day): longer ones are nonsense, not a limit. */
export const MAX_LEASE_TTL_MS = 86_400_000;
/** Closed leases and waits remembered for the statistics (the query): bounded, like the history. */
const RECENT_WAITS = 200;

export interface RateLimits {
  /** Tokens per minute; 0 = no token limit. */
  tokens_per_minute: number;
  /** Requests per minute; 0 = no request limit. */
  requests_per_minute: number;
  /** Leases open at once; 0 = no limit (MAX_OPEN_LEASES still applies). */
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

/** An open lease. Once released or expired it is folded into the window's counters and forgotten. */
export interface Lease {
  id: string;
  holder: string;
  reserved: number;
  granted_at: number;
  expires_at: number;
  waited_ms: number;
}

/** What closed leases granted within one second count: until `at` (the latest grant) + a minute. */
export interface WindowCounter {
  at: number;
  tokens: number;
  requests: number;
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
  /** Open leases only. */
  leases: Lease[];
  /** Closed leases still inside the minute, summed per second of their grant. */
  window: WindowCounter[];
  /**
   * The width of the window's counters; 0 = one counter per lease (exact, unbounded: only for
   * replaying limiter runs recorded before the counters existed).
   */
  bucket_ms: number;
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

export function newLimiterState(limits: RateLimits, bucketMs = BUCKET_MS): LimiterState {
  return {
    limits,
    queue: [],
    leases: [],
    window: [],
    bucket_ms: bucketMs,
    paused_until: 0,
    totals: { granted: 0, granted_tokens: 0, released: 0, used_tokens: 0, expired: 0, pauses: 0 },
    recent_waits: [],
  };
}

/** A lease as the limiter carried it before the window's counters: closed ones stayed in `leases`. */
interface CarriedLease extends Lease {
  status?: 'open' | 'released' | 'expired';
  used?: number;
}

/**
 * The state a limiter run was handed by continue-as-new, in the current shape: a state carried by
 * an older limiter (closed leases kept one by one) has its closed leases folded into the window.
 */
export function carriedState(carried: LimiterState, bucketMs: number): LimiterState {
  const state: LimiterState = { ...carried, leases: [], window: [...(carried.window ?? [])], bucket_ms: bucketMs };
  for (const lease of carried.leases as CarriedLease[]) {
    const { status, used, ...open } = lease;
    if (status === undefined || status === 'open') state.leases.push(open);
    else fold(state, lease.granted_at, status === 'released' ? (used ?? 0) : lease.reserved);
  }
  return state;
}

/** One-line error for limits that cannot work; undefined when they are fine. */
export function invalidLimits(limits: unknown): string | undefined {
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) return 'limits must be an object';
  const l = limits as Record<string, unknown>;
  for (const key of ['tokens_per_minute', 'requests_per_minute', 'max_in_flight'] as const) {
    const v = l[key];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      return `${key} must be a non-negative integer, got ${describe(v)}`;
  }
  const ttl = l.lease_ttl_ms;
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0 || ttl > MAX_LEASE_TTL_MS)
    return `lease_ttl_ms must be positive and at most ${MAX_LEASE_TTL_MS}, got ${describe(ttl)}`;
  return undefined;
}

/** One-line error for a lease request that cannot be queued; undefined when it is fine. */
export function invalidRequest(req: unknown): string | undefined {
  if (typeof req !== 'object' || req === null || Array.isArray(req)) return 'a lease request must be an object';
  const r = req as Record<string, unknown>;
  if (!validId(r.id)) return `a lease request needs an id of 1 to ${MAX_ID_CHARS} printable ASCII characters`;
  if (typeof r.tokens !== 'number' || !Number.isSafeInteger(r.tokens) || r.tokens < 0)
    return `tokens must be a non-negative integer, got ${describe(r.tokens)}`;
  // Rendered into the lease (and the state query): an object here could throw when made a string.
  if (r.holder !== undefined && typeof r.holder !== 'string')
    return `holder must be a string (the worker's name), got ${describe(r.holder)}`;
  return undefined;
}

/** A request id or lease id the limiter accepts. */
export function validId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_CHARS && /^[\x20-\x7e]+$/.test(id);
}

/** A value named in an error message: its type, or a short rendering of a number or string. */
function describe(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return JSON.stringify(v.length > 20 ? `${v.slice(0, 20)}...` : v);
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

/** The stricter of two values of one limit, where 0 means no limit (the loosest). */
function stricter(a: number, b: number): number {
  if (a === 0) return b;
  if (b === 0) return a;
  return Math.min(a, b);
}

/**
 * The limits a request brings, as the limiter adopts them: dimension by dimension never looser than
 * the limits it was started with (`base`), and with `base`'s lease TTL (a request cannot change it).
 * Raising a limit takes a new limiter (docs/rate-limits.md).
 */
export function adoptedLimits(base: RateLimits, asked: RateLimits): RateLimits {
  return {
    tokens_per_minute: stricter(base.tokens_per_minute, asked.tokens_per_minute),
    requests_per_minute: stricter(base.requests_per_minute, asked.requests_per_minute),
    max_in_flight: stricter(base.max_in_flight, asked.max_in_flight),
    lease_ttl_ms: base.lease_ttl_ms,
  };
}

/** Why a request of `tokens` can never be granted under these limits (one line); undefined when it can. */
export function oversized(limits: RateLimits, tokens: number): string | undefined {
  const tpm = limits.tokens_per_minute;
  if (tpm === 0 || tokens <= tpm) return undefined;
  return `tokens ${tokens} exceed the limit of ${tpm} tokens per minute: the request could never be granted`;
}

/** Why this request cannot join the queue now (it is full); undefined when it can. */
export function queueFull(state: LimiterState, id: string): string | undefined {
  if (state.queue.length < MAX_QUEUED || known(state, id)) return undefined;
  return `the limiter's queue is full (${state.queue.length} requests wait): ask again later`;
}

function known(state: LimiterState, id: string): boolean {
  return state.queue.some((w) => w.id === id) || state.leases.some((l) => l.id === id);
}

/**
 * Queues a request (idempotent: an id already queued or leased is left where it is). Returns false
 * when it was refused: the queue is full.
 */
export function enqueue(state: LimiterState, req: LeaseRequest, now: number): boolean {
  if (known(state, req.id)) return true;
  if (state.queue.length >= MAX_QUEUED) return false;
  state.queue.push({
    id: req.id,
    holder: typeof req.holder === 'string' ? req.holder.slice(0, MAX_HOLDER_CHARS) : '',
    tokens: req.tokens,
    queued_at: now,
  });
  return true;
}

/** The open lease granted to this request id, if any. */
export function leaseOf(state: LimiterState, id: string): Lease | undefined {
  return state.leases.find((l) => l.id === id);
}

/** Adds a closed lease granted at `grantedAt` to the window's counter of its second. */
function fold(state: LimiterState, grantedAt: number, tokens: number): void {
  const width = state.bucket_ms;
  const counter =
    width > 0 ? state.window.find((c) => Math.floor(c.at / width) === Math.floor(grantedAt / width)) : undefined;
  if (counter) {
    counter.at = Math.max(counter.at, grantedAt);
    counter.tokens += tokens;
    counter.requests++;
  } else state.window.push({ at: grantedAt, tokens, requests: 1 });
}

/** Expires the leases past their TTL and forgets the counters that left the window. */
export function expireLeases(state: LimiterState, now: number): void {
  const open: Lease[] = [];
  for (const lease of state.leases) {
    if (now < lease.expires_at) open.push(lease);
    else {
      // Its holder died (or overran): it counts its whole reservation inside its minute.
      state.totals.expired++;
      fold(state, lease.granted_at, lease.reserved);
    }
  }
  state.leases = open;
  state.window = state.window.filter((c) => now < c.at + WINDOW_MS);
}

/** What counts against the limits now. */
export function windowUsage(state: LimiterState, now: number): WindowUsage {
  const usage: WindowUsage = { tokens: 0, requests: 0, in_flight: 0, in_flight_tokens: 0 };
  for (const lease of state.leases) {
    // Past its TTL an open lease is expired, whether or not expireLeases ran yet.
    if (now < lease.expires_at) {
      usage.in_flight++;
      usage.in_flight_tokens += lease.reserved;
      usage.tokens += lease.reserved;
      usage.requests++;
    } else if (now < lease.granted_at + WINDOW_MS) {
      usage.tokens += lease.reserved;
      usage.requests++;
    }
  }
  for (const counter of state.window) {
    if (now < counter.at + WINDOW_MS) {
      usage.tokens += counter.tokens;
      usage.requests += counter.requests;
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
  const inFlightOk =
    (limits.max_in_flight === 0 || usage.in_flight < limits.max_in_flight) && usage.in_flight < MAX_OPEN_LEASES;
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
 * reservation comes back). An unknown id is ignored: the release was repeated, or the lease expired
 * (then its whole reservation keeps counting, as the provider may have charged it).
 */
export function release(state: LimiterState, id: string, usedTokens: number, now: number): void {
  const i = state.leases.findIndex((l) => l.id === id);
  if (i < 0) return;
  const lease = state.leases[i]!;
  const used = Number.isSafeInteger(usedTokens) && usedTokens >= 0 ? usedTokens : lease.reserved;
  state.leases.splice(i, 1);
  state.totals.released++;
  state.totals.used_tokens += used;
  fold(state, lease.granted_at, used);
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
  for (const lease of state.leases) consider(lease.expires_at);
  for (const counter of state.window) consider(counter.at + WINDOW_MS);
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
  /** The size of what the limiter carries to its next run (JSON characters): bounded, whatever the traffic. */
  carried_chars: number;
}

export function snapshot(state: LimiterState, now: number): LimiterSnapshot {
  // The query must not change state: work on a copy of what expiry would touch.
  const copy: LimiterState = {
    ...state,
    leases: [...state.leases],
    window: state.window.map((c) => ({ ...c })),
    totals: { ...state.totals },
  };
  expireLeases(copy, now);
  const usage = windowUsage(copy, now);
  const waits = [...copy.recent_waits].sort((a, b) => a - b);
  const rank = (p: number) => waits[Math.min(waits.length - 1, Math.ceil(p * waits.length) - 1)] ?? 0;
  const holders = new Map<string, { leases: number; tokens: number }>();
  for (const lease of copy.leases) {
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
    carried_chars: JSON.stringify(state).length,
  };
}
