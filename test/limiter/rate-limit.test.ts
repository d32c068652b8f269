// The LLM limiter's grant logic (common/limiter/rate-limit.ts) on hand-made clocks: FIFO without
// starvation, the minute window, released and expired leases, pauses, the in-flight cap, the caps
// on what it carries (measured at 10,000 leases a minute); a property test against an exact model
// of the minute; and the tokens one decision reserves.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  adoptedLimits,
  carriedState,
  enqueue,
  grantReady,
  invalidLimits,
  MAX_HOLDER_CHARS,
  MAX_ID_CHARS,
  MAX_OPEN_LEASES,
  MAX_QUEUED,
  newLimiterState,
  oversized,
  queueFull,
  nextWakeAt,
  pause,
  release,
  snapshot,
  WINDOW_MS,
  windowUsage,
  withdraw,
} from '../../common/limiter/rate-limit';
import { COMPLETION_RESERVE_TOKENS, reservedTokens } from '../../activities/limiter/limiter-settings';
import type { LimiterState, RateLimits } from '../../common/limiter/rate-limit';

const limits = (over: Partial<RateLimits> = {}): RateLimits => ({
  tokens_per_minute: 1000,
  requests_per_minute: 0,
  max_in_flight: 0,
  lease_ttl_ms: 10_000,
  ...over,
});
const ids = (leases: Array<{ id: string }>) => leases.map((l) => l.id);

describe('rate limiter grants', () => {
  it('grants in arrival order while the minute has room, then waits', () => {
    const s = newLimiterState(limits());
    enqueue(s, { id: 'a', holder: 'w1', tokens: 400 }, 0);
    enqueue(s, { id: 'b', holder: 'w1', tokens: 400 }, 1);
    enqueue(s, { id: 'c', holder: 'w2', tokens: 400 }, 2);
    assert.deepEqual(ids(grantReady(s, 10)), ['a', 'b']);
    assert.deepEqual(ids(s.queue), ['c']);
    assert.equal(windowUsage(s, 10).tokens, 800);
  });

  it('is FIFO: a large request at the head is not overtaken by small ones (no starvation)', () => {
    const s = newLimiterState(limits());
    enqueue(s, { id: 'a', holder: 'w', tokens: 600 }, 0);
    grantReady(s, 0);
    enqueue(s, { id: 'big', holder: 'w', tokens: 900 }, 1);
    enqueue(s, { id: 'small', holder: 'w', tokens: 100 }, 2);
    assert.deepEqual(ids(grantReady(s, 3)), [], 'small fits but must not overtake big');
    release(s, 'a', 50, 4);
    assert.deepEqual(ids(grantReady(s, 5)), ['big'], 'the unused part came back: 50 + 900 fits');
    assert.deepEqual(ids(grantReady(s, 6)), [], 'small still does not fit');
  });

  it('a released lease counts what it used for the rest of its minute, then nothing', () => {
    const s = newLimiterState(limits());
    enqueue(s, { id: 'a', holder: 'w', tokens: 1000 }, 0);
    grantReady(s, 0);
    release(s, 'a', 120, 1000);
    assert.deepEqual(windowUsage(s, 1000), { tokens: 120, requests: 1, in_flight: 0, in_flight_tokens: 0 });
    assert.equal(windowUsage(s, WINDOW_MS).tokens, 0);
  });

  it('an open lease holds its reservation past the minute until released or expired', () => {
    const s = newLimiterState(limits({ lease_ttl_ms: 5 * WINDOW_MS }));
    enqueue(s, { id: 'slow', holder: 'w', tokens: 900 }, 0);
    grantReady(s, 0);
    enqueue(s, { id: 'next', holder: 'w', tokens: 900 }, 1);
    assert.deepEqual(ids(grantReady(s, 2 * WINDOW_MS)), []);
    release(s, 'slow', 900, 2 * WINDOW_MS);
    assert.deepEqual(ids(grantReady(s, 2 * WINDOW_MS)), ['next'], 'released outside its minute: counts nothing now');
  });

  it("a dead holder's lease expires after its TTL and the capacity comes back", () => {
    const s = newLimiterState(limits({ tokens_per_minute: 0, max_in_flight: 2, lease_ttl_ms: 10_000 }));
    for (const id of ['dead1', 'dead2', 'live']) enqueue(s, { id, holder: 'w', tokens: 10 }, 0);
    assert.deepEqual(ids(grantReady(s, 0)), ['dead1', 'dead2']);
    assert.deepEqual(ids(grantReady(s, 9_999)), []);
    assert.equal(nextWakeAt(s, 9_999), 10_000, 'the limiter wakes itself when the leases expire');
    assert.deepEqual(ids(grantReady(s, 10_000)), ['live']);
    assert.equal(s.totals.expired, 2);
    // An expired lease still counts its whole reservation inside its minute (it may have been spent).
    const t = newLimiterState(limits({ lease_ttl_ms: 1000 }));
    enqueue(t, { id: 'x', holder: 'w', tokens: 700 }, 0);
    grantReady(t, 0);
    assert.equal(windowUsage(t, 2000).tokens, 700);
    assert.equal(windowUsage(t, WINDOW_MS).tokens, 0);
  });

  it('a pause stops every grant until it ends', () => {
    const s = newLimiterState(limits());
    pause(s, 5000);
    enqueue(s, { id: 'a', holder: 'w', tokens: 1 }, 0);
    assert.deepEqual(ids(grantReady(s, 4999)), []);
    assert.equal(nextWakeAt(s, 4999), 5000);
    assert.deepEqual(ids(grantReady(s, 5000)), ['a']);
    pause(s, 1000); // an earlier end does not shorten the pause
    assert.equal(s.paused_until, 5000);
  });

  it('counts requests per minute', () => {
    const s = newLimiterState(limits({ tokens_per_minute: 0, requests_per_minute: 2 }));
    for (const id of ['a', 'b', 'c']) enqueue(s, { id, holder: 'w', tokens: 0 }, 0);
    assert.deepEqual(ids(grantReady(s, 0)), ['a', 'b']);
    release(s, 'a', 0, 1);
    release(s, 'b', 0, 1);
    assert.deepEqual(ids(grantReady(s, 1)), [], 'released, but still this minute');
    assert.equal(nextWakeAt(s, 1), WINDOW_MS);
    assert.deepEqual(ids(grantReady(s, WINDOW_MS)), ['c']);
  });

  it('grants an oversized request alone, when nothing else counts', () => {
    const s = newLimiterState(limits());
    enqueue(s, { id: 'small', holder: 'w', tokens: 10 }, 0);
    enqueue(s, { id: 'huge', holder: 'w', tokens: 5000 }, 0);
    assert.deepEqual(ids(grantReady(s, 0)), ['small']);
    release(s, 'small', 10, 1);
    assert.deepEqual(ids(grantReady(s, WINDOW_MS)), ['huge']);
  });

  it('is idempotent per request id, and a withdrawn request leaves the queue', () => {
    const s = newLimiterState(limits({ tokens_per_minute: 10 }));
    enqueue(s, { id: 'a', holder: 'w', tokens: 10 }, 0);
    enqueue(s, { id: 'a', holder: 'w', tokens: 10 }, 5);
    assert.equal(s.queue.length, 1);
    grantReady(s, 0);
    enqueue(s, { id: 'a', holder: 'w', tokens: 10 }, 6);
    assert.equal(s.queue.length, 0, 'an id already leased is not queued again');
    enqueue(s, { id: 'b', holder: 'w', tokens: 10 }, 7);
    withdraw(s, 'b');
    assert.equal(s.queue.length, 0);
    release(s, 'a', 3, 8);
    release(s, 'a', 9, 9); // a repeated release changes nothing
    assert.equal(windowUsage(s, 10).tokens, 3);
  });

  it('reports limits, use, queue and waits; rejects nonsense limits', () => {
    const s = newLimiterState(limits({ tokens_per_minute: 100 }));
    enqueue(s, { id: 'a', holder: 'w1', tokens: 100 }, 0);
    enqueue(s, { id: 'b', holder: 'w2', tokens: 50 }, 1000);
    grantReady(s, 2000);
    const snap = snapshot(s, 3000);
    assert.deepEqual(snap.in_use, { leases: 1, tokens: 100 });
    assert.deepEqual(snap.queued, { requests: 1, tokens: 50, oldest_wait_ms: 2000 });
    assert.equal(snap.granted.granted, 1);
    assert.equal(snap.wait_ms.max, 2000);
    assert.deepEqual(snap.holders, [{ holder: 'w1', leases: 1, tokens: 100 }]);
    assert.match(invalidLimits(limits({ tokens_per_minute: -1 })) ?? '', /tokens_per_minute/);
    assert.match(invalidLimits(limits({ lease_ttl_ms: 0 })) ?? '', /lease_ttl_ms/);
    assert.equal(invalidLimits(limits()), undefined);
  });
});

/** What continue-as-new carries for this state (the limiter's input), in UTF-8 bytes. */
const carriedBytes = (state: LimiterState, lim: RateLimits) =>
  Buffer.byteLength(JSON.stringify({ scope: 'gpt-4.1-mini', limits: lim, state }), 'utf8');

/** A request id as long as the limiter takes: `<n>` padded with x. */
const longId = (n: number) => `${n}-`.padEnd(MAX_ID_CHARS, 'x');

describe('what the limiter carries is bounded', () => {
  it('at 10,000 leases a minute for 5 minutes, with the longest ids and holders', (t) => {
    // 167 grants a second, each call held 0-3 s (about 250 open at once), released with what it used.
    const lim = limits({ tokens_per_minute: 0, requests_per_minute: 10_000, lease_ttl_ms: 90_000 });
    const s = newLimiterState(lim);
    const holder = 'h'.repeat(300);
    const open: Array<{ id: string; until: number }> = [];
    let maxBytes = 0;
    let maxFixed = 0;
    let maxOpen = 0;
    let n = 0;
    for (let now = 0; now < 5 * WINDOW_MS; now += 6) {
      enqueue(s, { id: longId(n++), holder, tokens: 1500 }, now);
      for (const lease of grantReady(s, now)) open.push({ id: lease.id, until: now + (n % 3001) });
      for (let i = open.length - 1; i >= 0; i--) {
        if (open[i]!.until <= now) {
          release(s, open[i]!.id, 700, now);
          open.splice(i, 1);
        }
      }
      maxOpen = Math.max(maxOpen, open.length);
      if (n % 100 === 0) {
        maxBytes = Math.max(maxBytes, carriedBytes(s, lim));
        maxFixed = Math.max(maxFixed, carriedBytes({ ...s, leases: [], queue: [] }, lim));
      }
    }
    const granted = s.totals.granted;
    const perLease = Math.ceil(Buffer.byteLength(JSON.stringify(s.leases), 'utf8') / s.leases.length);
    t.diagnostic(
      `${granted} leases in 5 min; at most ${maxOpen} open (${perLease} bytes each); ` +
        `carried at most ${maxBytes} bytes, of which at most ${maxFixed} besides the open leases and the queue`,
    );
    assert.ok(granted >= 49_000, `granted ${granted}`);
    // Only the open leases grow with load (and they are capped); the window is 61 counters at most.
    assert.ok(maxFixed < 8_000, `carried ${maxFixed} bytes besides the leases`);
    assert.ok(maxBytes < maxFixed + maxOpen * 300, `carried ${maxBytes} bytes`);
    assert.ok(s.leases.every((l) => l.holder.length <= MAX_HOLDER_CHARS));
  });

  it('at its caps (1,000 open leases, 1,000 queued, a full window) it stays far under the 2 MB a payload may have', (t) => {
    const lim = limits({ tokens_per_minute: 0, lease_ttl_ms: 3_600_000 });
    const s = newLimiterState(lim);
    const holder = 'h'.repeat(MAX_HOLDER_CHARS);
    // A closed lease in every second of the minute, then the open ones and the queue at their caps.
    for (let i = 0; i < 61; i++) {
      enqueue(s, { id: longId(i), holder, tokens: Number.MAX_SAFE_INTEGER }, i * 1000);
      grantReady(s, i * 1000);
      release(s, longId(i), 1, i * 1000);
    }
    const now = 60_500;
    const ask = (from: number, count: number) => {
      for (let i = from; i < from + count; i++)
        enqueue(s, { id: longId(i), holder, tokens: Number.MAX_SAFE_INTEGER }, now);
    };
    ask(1000, MAX_OPEN_LEASES + 5);
    grantReady(s, now);
    ask(3000, MAX_QUEUED);
    assert.equal(s.leases.length, MAX_OPEN_LEASES, 'no more leases open than the cap, max_in_flight or not');
    assert.equal(s.queue.length, MAX_QUEUED, 'the queue stops at its cap');
    assert.equal(enqueue(s, { id: 'one-more', holder, tokens: 1 }, now), false);
    assert.match(queueFull(s, 'one-more') ?? '', /^the limiter's queue is full \(1000 requests wait\)/);
    assert.equal(queueFull(s, s.queue[0]!.id), undefined, 'a request already queued is not refused');
    assert.ok(s.window.length <= 61, `${s.window.length} window counters`);
    const bytes = carriedBytes(s, lim);
    t.diagnostic(`carried at the caps: ${bytes} bytes`);
    assert.ok(bytes < 512 * 1024, `carried ${bytes} bytes`);
  });

  it('a counter leaves the window a minute after the latest grant it holds, never earlier', () => {
    const s = newLimiterState(limits({ tokens_per_minute: 0, requests_per_minute: 2 }));
    enqueue(s, { id: 'a', holder: 'w', tokens: 1 }, 100);
    grantReady(s, 100);
    enqueue(s, { id: 'b', holder: 'w', tokens: 1 }, 900);
    grantReady(s, 900);
    release(s, 'a', 1, 950);
    release(s, 'b', 1, 950);
    assert.deepEqual(s.window, [{ at: 900, tokens: 2, requests: 2 }], 'one counter for the second');
    for (const id of ['c', 'd']) enqueue(s, { id, holder: 'w', tokens: 1 }, 1000);
    assert.equal(nextWakeAt(s, 1000), 900 + WINDOW_MS);
    assert.deepEqual(ids(grantReady(s, 100 + WINDOW_MS)), [], "a's own minute is over, b's is not");
    assert.deepEqual(ids(grantReady(s, 900 + WINDOW_MS)), ['c', 'd']);
  });

  it('folds the closed leases an older limiter carried one by one into the window', () => {
    const old = {
      ...newLimiterState(limits()),
      leases: [
        { id: 'a', holder: 'w', reserved: 500, granted_at: 0, expires_at: 9_000, waited_ms: 0, status: 'open' },
        {
          id: 'b',
          holder: 'w',
          reserved: 300,
          used: 100,
          granted_at: 100,
          expires_at: 9_100,
          waited_ms: 0,
          status: 'released',
        },
        { id: 'c', holder: 'w', reserved: 200, granted_at: 200, expires_at: 300, waited_ms: 0, status: 'expired' },
      ],
    } as unknown as LimiterState;
    delete (old as Partial<LimiterState>).window;
    const s = carriedState(old, 1000);
    assert.deepEqual(ids(s.leases), ['a']);
    assert.deepEqual(s.window, [{ at: 200, tokens: 300, requests: 2 }], 'used 100 + reserved 200, one second');
    assert.deepEqual(windowUsage(s, 1000), { tokens: 800, requests: 3, in_flight: 1, in_flight_tokens: 500 });
    assert.equal(windowUsage(s, 200 + WINDOW_MS).tokens, 0, 'the counter leaves a minute after its latest grant');
  });
});

/** What the limit promises, computed exactly from every lease ever granted (no counters). */
interface ExactLease {
  id: string;
  granted_at: number;
  reserved: number;
  ttl_end: number;
  /** Set when released before its TTL: counts this from then on. */
  used?: number;
}

function exactUsage(leases: ExactLease[], now: number): { tokens: number; requests: number; in_flight: number } {
  const u = { tokens: 0, requests: 0, in_flight: 0 };
  for (const l of leases) {
    const open = l.used === undefined && now < l.ttl_end;
    if (open) u.in_flight++;
    if (open || now < l.granted_at + WINDOW_MS) {
      u.tokens += open || l.used === undefined ? l.reserved : l.used;
      u.requests++;
    }
  }
  return u;
}

describe('the limit holds against an exact model of the minute (property)', () => {
  type Op =
    | { kind: 'ask'; tokens: number }
    | { kind: 'release'; pick: number; used: number }
    | { kind: 'pause'; ms: number }
    | { kind: 'withdraw'; pick: number }
    | { kind: 'wait'; ms: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({ kind: fc.constant('ask' as const), tokens: fc.integer({ min: 0, max: 700 }) }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('release' as const),
        pick: fc.nat(),
        used: fc.oneof(fc.integer({ min: 0, max: 900 }), fc.constant(-1), fc.constant(Number.NaN)),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('pause' as const), ms: fc.integer({ min: 0, max: 5000 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('withdraw' as const), pick: fc.nat() }) },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('wait' as const),
        ms: fc.oneof(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 70_000 })),
      }),
    },
  );

  it('never grants beyond the tokens, requests or leases of any minute, in FIFO order, with bounded state', () => {
    fc.assert(
      fc.property(
        fc.record({
          tokens_per_minute: fc.integer({ min: 1, max: 3000 }),
          requests_per_minute: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 6 })),
          max_in_flight: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 6 })),
          lease_ttl_ms: fc.integer({ min: 500, max: 90_000 }),
        }),
        fc.array(op, { maxLength: 300 }),
        (lim, ops) => {
          const s = newLimiterState(lim);
          const exact: ExactLease[] = [];
          const asked: string[] = [];
          const grantedOrder: string[] = [];
          let now = 0;
          let n = 0;
          const grant = () => {
            for (const lease of grantReady(s, now)) {
              const before = exactUsage(exact, now);
              // An oversized request is granted alone, when nothing else counts.
              if (lease.reserved > lim.tokens_per_minute) assert.equal(before.tokens, 0, 'oversized, not alone');
              else assert.ok(before.tokens + lease.reserved <= lim.tokens_per_minute, 'tokens per minute');
              if (lim.requests_per_minute > 0) assert.ok(before.requests < lim.requests_per_minute, 'requests');
              if (lim.max_in_flight > 0) assert.ok(before.in_flight < lim.max_in_flight, 'in flight');
              exact.push({ id: lease.id, granted_at: now, reserved: lease.reserved, ttl_end: lease.expires_at });
              grantedOrder.push(lease.id);
            }
          };
          for (const o of ops) {
            if (o.kind === 'ask') {
              const id = `r${n++}`;
              enqueue(s, { id, holder: 'w', tokens: o.tokens }, now);
              asked.push(id);
            } else if (o.kind === 'release' && exact.length > 0) {
              const l = exact[o.pick % exact.length]!;
              // The limiter forgets a lease once released or expired; the exact model only a release before its TTL.
              if (l.used === undefined && now < l.ttl_end)
                l.used = Number.isSafeInteger(o.used) && o.used >= 0 ? o.used : l.reserved;
              release(s, l.id, o.used, now);
            } else if (o.kind === 'pause') pause(s, now + o.ms);
            else if (o.kind === 'withdraw' && asked.length > 0) withdraw(s, asked[o.pick % asked.length]!);
            else if (o.kind === 'wait') {
              // The workflow wakes at nextWakeAt when nothing else happens: so do we, on the way.
              const until = now + o.ms;
              for (let wake = nextWakeAt(s, now); wake !== undefined && wake <= until; wake = nextWakeAt(s, now)) {
                now = wake;
                grant();
              }
              now = until;
            }
            grant();
            assert.ok(s.window.length <= 61, 'at most one counter per second of the minute');
          }
          // FIFO: leases were granted in the order they were asked for (withdrawn ones skipped).
          const order = asked.filter((id) => grantedOrder.includes(id));
          assert.deepEqual(grantedOrder, order);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('requests cannot loosen the limits nor hold more than a minute (property)', () => {
  // Each `acquire` as the limiter takes it (workflows/limiter/llm-limiter.ts): refused when it could never be
  // granted, else its limits adopted (never looser than the start's) and the request queued.
  const limitsArb = fc.record({
    tokens_per_minute: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5000 })),
    requests_per_minute: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 })),
    max_in_flight: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 })),
    lease_ttl_ms: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 200_000 })),
  });
  type Step =
    | { kind: 'ask'; tokens: number; limits: RateLimits }
    | { kind: 'release'; pick: number; used: number }
    | { kind: 'wait'; ms: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('ask' as const),
        tokens: fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.constant(9_000_000_000)),
        limits: limitsArb,
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('release' as const),
        pick: fc.nat(),
        used: fc.integer({ min: 0, max: 900 }),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 70_000 }) }),
    },
  );
  const looser = (now: number, start: number) => start > 0 && (now === 0 || now > start);

  it('no sequence of valid requests makes the limits looser than the start, or what a minute counts exceed its tokens', () => {
    fc.assert(
      fc.property(
        limitsArb.filter((l) => l.tokens_per_minute > 0),
        fc.array(step, { maxLength: 200 }),
        (start, steps) => {
          const s = newLimiterState(start);
          const exact: ExactLease[] = [];
          let now = 0;
          let n = 0;
          const grant = () => {
            for (const lease of grantReady(s, now)) {
              const before = exactUsage(exact, now);
              assert.ok(before.tokens + lease.reserved <= start.tokens_per_minute, 'tokens per minute');
              if (start.requests_per_minute > 0) assert.ok(before.requests < start.requests_per_minute, 'requests');
              if (start.max_in_flight > 0) assert.ok(before.in_flight < start.max_in_flight, 'in flight');
              assert.equal(lease.expires_at - lease.granted_at, start.lease_ttl_ms, 'the TTL it started with');
              exact.push({ id: lease.id, granted_at: now, reserved: lease.reserved, ttl_end: lease.expires_at });
            }
          };
          for (const o of steps) {
            if (o.kind === 'ask') {
              const adopted = adoptedLimits(start, o.limits);
              if (oversized(adopted, o.tokens) === undefined) {
                s.limits = adopted;
                enqueue(s, { id: `r${n++}`, holder: 'w', tokens: o.tokens }, now);
              } else assert.ok(o.tokens > adopted.tokens_per_minute);
            } else if (o.kind === 'release' && exact.length > 0) {
              const l = exact[o.pick % exact.length]!;
              if (l.used === undefined && now < l.ttl_end) l.used = o.used;
              release(s, l.id, o.used, now);
            } else if (o.kind === 'wait') {
              const until = now + o.ms;
              for (let wake = nextWakeAt(s, now); wake !== undefined && wake <= until; wake = nextWakeAt(s, now)) {
                now = wake;
                grant();
              }
              now = until;
            }
            grant();
            for (const key of ['tokens_per_minute', 'requests_per_minute', 'max_in_flight'] as const)
              assert.ok(!looser(s.limits[key], start[key]), `${key} ${s.limits[key]} looser than ${start[key]}`);
            assert.equal(s.limits.lease_ttl_ms, start.lease_ttl_ms);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('a request tightens the limits only until the next one; one larger than a minute is refused in one line', () => {
    const start = limits({ tokens_per_minute: 100_000, requests_per_minute: 0, max_in_flight: 2 });
    const evil = { tokens_per_minute: 0, requests_per_minute: 0, max_in_flight: 0, lease_ttl_ms: 1 };
    assert.deepEqual(adoptedLimits(start, evil), start);
    assert.deepEqual(adoptedLimits(start, { ...evil, requests_per_minute: 5, max_in_flight: 9 }), {
      ...start,
      requests_per_minute: 5,
    });
    assert.equal(
      oversized(start, 9_000_000_000),
      'tokens 9000000000 exceed the limit of 100000 tokens per minute: the request could never be granted',
    );
    assert.equal(oversized(start, 100_000), undefined);
    assert.equal(oversized(limits({ tokens_per_minute: 0 }), 9_000_000_000), undefined);
  });
});

describe('the reservation of one decision (activities/limiter/limiter-settings.ts)', () => {
  it('is the prompt estimate plus the completion cap the run sent, else the default reserve', () => {
    // 400 characters: 100 tokens of prompt.
    assert.equal(reservedTokens(400), 100 + COMPLETION_RESERVE_TOKENS);
    // A dollar budget caps the completion: the lease reserves that cap, not 1,000.
    assert.equal(reservedTokens(400, 250), 350);
    assert.equal(reservedTokens(400, 4096), 4196);
  });
});
