// The LLM limiter's grant logic (common/rate-limit.ts) on hand-made clocks: FIFO without
// starvation, the minute window, released and expired leases, pauses, the in-flight cap; and the
// tokens one decision reserves.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  enqueue,
  grantReady,
  invalidLimits,
  newLimiterState,
  nextWakeAt,
  pause,
  release,
  snapshot,
  WINDOW_MS,
  windowUsage,
  withdraw,
} from '../common/rate-limit';
import { COMPLETION_RESERVE_TOKENS, reservedTokens } from '../activities/llm-lease';
import type { RateLimits } from '../common/rate-limit';

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

describe('the reservation of one decision (activities/llm-lease.ts)', () => {
  it('is the prompt estimate plus the completion cap the run sent, else the default reserve', () => {
    // 400 characters: 100 tokens of prompt.
    assert.equal(reservedTokens(400), 100 + COMPLETION_RESERVE_TOKENS);
    // A dollar budget caps the completion (cost-budget-v1): the lease reserves that cap, not 1,000.
    assert.equal(reservedTokens(400, 250), 350);
    assert.equal(reservedTokens(400, 4096), 4196);
  });
});
