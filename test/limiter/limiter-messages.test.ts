// The checks every message to the LLM limiter passes (common/limiter/llm-limiter.ts) before the limiter
// acts on it, against anything a sender may put in a payload (property-based): they never throw,
// they answer in one short line, and what they let through is what the grant logic expects. Then
// the limiter's handlers, as the workflow runs them, over a stream of hostile and good messages.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RawValue } from '@temporalio/common';
import {
  invalidAcquire,
  invalidInput,
  MAX_PAUSE_MS,
  parsePause,
  parseRelease,
  parseWithdraw,
} from '../../common/limiter/llm-limiter';
import { decodedArgument } from '../../common/temporal/undecoded-signal';
import type { AcquireRequest } from '../../common/limiter/llm-limiter';
import {
  enqueue,
  grantReady,
  MAX_ID_CHARS,
  newLimiterState,
  pause,
  queueFull,
  release,
  snapshot,
  validId,
  withdraw,
} from '../../common/limiter/rate-limit';

const LIMITS = { tokens_per_minute: 1000, requests_per_minute: 0, max_in_flight: 2, lease_ttl_ms: 10_000 };

/** What a sender may put in a payload: JSON of any shape, near-misses of the real ones, and worse. */
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({ withNullPrototype: true, withBigInt: false, withObjectString: true }),
  fc.jsonValue(),
  fc.constantFrom(
    null,
    undefined,
    [],
    [1, 2],
    'NaN',
    'Infinity',
    Number.NaN,
    Number.POSITIVE_INFINITY,
    -0,
    'x'.repeat(1 << 20),
  ),
  fc.record(
    {
      id: fc.oneof(fc.string(), fc.constant('x'.repeat(100_000)), fc.constant('NaN'), fc.integer(), fc.constant(null)),
      lease_id: fc.oneof(fc.string(), fc.constant('id\n\u0000'), fc.integer(), fc.constant([])),
      holder: fc.oneof(fc.string(), fc.constant({ toString: 1 }), fc.constant('h'.repeat(100_000))),
      tokens: fc.oneof(fc.double(), fc.integer(), fc.constant('NaN'), fc.constant(2 ** 60)),
      used_tokens: fc.oneof(fc.double(), fc.integer(), fc.string()),
      retry_after_ms: fc.oneof(fc.double(), fc.integer(), fc.constant('NaN'), fc.constant('1e309')),
      again: fc.oneof(fc.boolean(), fc.string()),
      limits: fc.oneof(
        fc.constant(LIMITS),
        fc.record({
          tokens_per_minute: fc.oneof(fc.double(), fc.integer(), fc.string()),
          requests_per_minute: fc.oneof(fc.double(), fc.integer()),
          max_in_flight: fc.integer(),
          lease_ttl_ms: fc.oneof(fc.double(), fc.integer()),
        }),
        fc.constant(null),
        fc.constant('limits'),
      ),
      scope: fc.oneof(fc.string(), fc.constant(''), fc.constant('m'.repeat(500)), fc.integer()),
      state: fc.oneof(fc.constant(undefined), fc.constant(null), fc.constant([]), fc.constant('state')),
      continue_as_new_after_events: fc.oneof(fc.integer(), fc.double(), fc.constant('2000')),
    },
    { requiredKeys: [] },
  ),
);

/** A refusal is one short line that does not echo the payload. */
function oneLine(problem: string): void {
  assert.ok(problem.length > 0 && problem.length <= 200, problem.slice(0, 300));
  assert.ok(!problem.includes('\n'), problem);
}

describe('the limiter checks every message (property)', () => {
  it('never throws on any payload; refuses in one short line; lets through only what the grant logic takes', () => {
    fc.assert(
      fc.property(hostile, (payload) => {
        const r = parseRelease(payload);
        if (typeof r === 'string') oneLine(r);
        else assert.ok(validId(r.lease_id) && Number.isSafeInteger(r.used_tokens));

        const p = parsePause(payload);
        if (typeof p === 'string') oneLine(p);
        else assert.ok(Number.isFinite(p.retry_after_ms) && p.retry_after_ms >= 0 && p.retry_after_ms <= MAX_PAUSE_MS);

        const w = parseWithdraw(payload);
        if (typeof w === 'string') oneLine(w);
        else assert.ok(validId(w.id));

        const a = invalidAcquire(payload);
        if (a !== undefined) oneLine(a);
        else {
          const req = payload as AcquireRequest;
          assert.ok(validId(req.id) && req.id.length <= MAX_ID_CHARS);
          assert.ok(Number.isSafeInteger(req.tokens) && req.tokens >= 0);
          assert.ok(Number.isFinite(req.limits.lease_ttl_ms) && req.limits.lease_ttl_ms > 0);
        }

        const i = invalidInput(payload);
        if (i !== undefined) oneLine(i);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a holder that is not a string (an object could throw when rendered)', () => {
    for (const holder of [{ toString: 1 }, { toString: () => 'x' }, 7, null, ['w']]) {
      const problem = invalidAcquire({ id: 'h1', holder, tokens: 1, limits: LIMITS });
      assert.ok(problem?.startsWith('holder must be a string'), String(problem));
    }
    assert.equal(invalidAcquire({ id: 'h1', tokens: 1, limits: LIMITS }), undefined, 'no holder: anonymous');
  });

  it('decodes any payload a sender may build (any encoding, any bytes) without throwing', () => {
    const encoding = fc.oneof(
      fc.constantFrom('json/plain', 'binary/null', 'binary/plain', 'json/protobuf', 'binary/encrypted'),
      fc.string({ maxLength: 300 }),
    );
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 200 }),
      fc.jsonValue().map((v) => new TextEncoder().encode(JSON.stringify(v) ?? 'null')),
    );
    fc.assert(
      fc.property(fc.option(encoding, { nil: undefined }), bytes, (enc, data) => {
        const metadata: Record<string, Uint8Array> =
          enc === undefined ? {} : { encoding: new TextEncoder().encode(enc) };
        const arg = decodedArgument(RawValue.fromPayload({ metadata, data }));
        if (typeof arg === 'string') oneLine(arg);
      }),
      { numRuns: 1000 },
    );
    assert.deepEqual(decodedArgument(new RawValue({ lease_id: 'a' })), { value: { lease_id: 'a' } });
    assert.deepEqual(decodedArgument(undefined), { value: undefined }, 'no argument at all');
  });

  it('accepts every well-formed message as it is', () => {
    const id = fc.stringMatching(/^[\x20-\x7e]{1,64}$/);
    fc.assert(
      fc.property(id, fc.nat(), fc.integer({ min: 0, max: 120_000 }), (leaseId, used, ms) => {
        assert.deepEqual(parseRelease({ lease_id: leaseId, used_tokens: used }), {
          lease_id: leaseId,
          used_tokens: used,
        });
        assert.deepEqual(parsePause({ retry_after_ms: ms }), { retry_after_ms: Math.min(ms, MAX_PAUSE_MS) });
        assert.deepEqual(parseWithdraw({ id: leaseId }), { id: leaseId });
        assert.equal(invalidAcquire({ id: leaseId, holder: 'w', tokens: used, limits: LIMITS }), undefined);
        assert.equal(
          invalidAcquire({ id: leaseId, holder: 'w', tokens: used, limits: LIMITS, again: true }),
          undefined,
        );
        assert.equal(invalidInput({ scope: 'gpt-4.1-mini', limits: LIMITS }), undefined);
      }),
    );
  });

  it("the limiter's handlers, fed hostile and good messages in any order, never throw and keep granting", () => {
    type Msg = { name: 'acquire' | 'release' | 'pause' | 'withdraw'; payload: unknown };
    const good = (n: number): fc.Arbitrary<Msg> =>
      fc.constantFrom<Msg>(
        { name: 'acquire', payload: { id: `r${n}`, holder: 'w', tokens: 100, limits: LIMITS } },
        { name: 'release', payload: { lease_id: `r${n}`, used_tokens: 50 } },
      );
    const msg: fc.Arbitrary<Msg> = fc.oneof(
      fc.record({ name: fc.constantFrom('acquire', 'release', 'pause', 'withdraw'), payload: hostile }),
      fc.nat({ max: 30 }).chain(good),
    ) as fc.Arbitrary<Msg>;
    fc.assert(
      fc.property(fc.array(msg, { maxLength: 60 }), (msgs) => {
        const state = newLimiterState(LIMITS);
        let now = 0;
        // As workflows/limiter/llm-limiter.ts runs them: a refused Update or a dropped Signal changes nothing.
        for (const { name, payload } of msgs) {
          now += 100;
          if (name === 'acquire') {
            const req = payload as AcquireRequest;
            if (invalidAcquire(payload) ?? queueFull(state, req.id)) continue;
            state.limits = req.limits;
            enqueue(state, req, now);
          } else if (name === 'release') {
            const m = parseRelease(payload);
            if (typeof m !== 'string') release(state, m.lease_id, m.used_tokens, now);
          } else if (name === 'pause') {
            const m = parsePause(payload);
            if (typeof m !== 'string') pause(state, now + m.retry_after_ms);
          } else {
            const m = parseWithdraw(payload);
            if (typeof m !== 'string') withdraw(state, m.id);
          }
          grantReady(state, now);
          snapshot(state, now);
        }
        // Whatever came before, a good request is granted: at the latest when the leases ahead of it
        // (never released here) expired and every pause and minute is over.
        state.limits = LIMITS;
        assert.ok(enqueue(state, { id: 'after', holder: 'w', tokens: 1 }, now));
        for (let i = 0; i <= msgs.length && !state.leases.some((l) => l.id === 'after'); i++) {
          now += 2 * 60_000;
          grantReady(state, now);
        }
        assert.ok(
          state.leases.some((l) => l.id === 'after'),
          'the good request was granted',
        );
      }),
      { numRuns: 500 },
    );
  });
});
