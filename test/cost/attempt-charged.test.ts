// The llm_attempt_charged Signal's payload check and how its charges join a decision's ledger:
// hostile payloads (fast-check) never produce a charge outside the running decision or its bounds.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkAttemptCharged, withSignalled } from '../../common/cost/attempt-charged';
import type { AttemptCharge } from '../../common/cost/budget';

const deciding = { step: 3, maxAttempts: 3 };
const charge: AttemptCharge = {
  step: 3,
  attempt: 1,
  outcome: 'failed',
  prompt_tokens: 40,
  completion_tokens: 10,
  cost_usd: 0.02,
};

describe('the llm_attempt_charged Signal', () => {
  it('takes a failed attempt of the running decision, as a fresh object', () => {
    const checked = checkAttemptCharged({ ...charge }, deciding);
    assert.deepEqual(checked, charge);
  });

  it('drops anything else, saying why', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['x', /not an object/],
      [null, /not an object/],
      [[charge], /not an object/],
      [{ ...charge, step: 2 }, /step/],
      [{ ...charge, attempt: 0 }, /attempt/],
      [{ ...charge, attempt: 4 }, /attempt/],
      [{ ...charge, outcome: 'ok' }, /outcome/],
      [{ ...charge, prompt_tokens: -1 }, /token/],
      [{ ...charge, completion_tokens: 1e300 }, /token/],
      [{ ...charge, cost_usd: Number.NaN }, /cost_usd/],
      [{ ...charge, cost_usd: 1e12 }, /cost_usd/],
      [{ ...charge, extra: 1 }, /unknown field "extra"/],
    ];
    for (const [value, why] of cases) assert.match(checkAttemptCharged(value, deciding) as string, why);
    assert.match(checkAttemptCharged(charge, undefined) as string, /no decision is running/);
  });

  it('never lets a payload out of the running decision or its bounds (property)', () => {
    const anyValue = fc.oneof(
      fc.anything(),
      fc.record(
        {
          step: fc.oneof(fc.integer(), fc.double(), fc.constant(3)),
          attempt: fc.oneof(fc.integer(), fc.double(), fc.integer({ min: 1, max: 3 })),
          outcome: fc.constantFrom('failed', 'ok', ''),
          prompt_tokens: fc.oneof(fc.integer(), fc.double()),
          completion_tokens: fc.oneof(fc.integer(), fc.double()),
          cost_usd: fc.oneof(fc.double(), fc.constant(0.02)),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(anyValue, (value) => {
        const checked = checkAttemptCharged(value, deciding);
        if (typeof checked === 'string') return;
        assert.equal(checked.step, 3);
        assert.ok(Number.isSafeInteger(checked.attempt) && checked.attempt >= 1 && checked.attempt <= 3);
        assert.equal(checked.outcome, 'failed');
        assert.ok(Number.isFinite(checked.cost_usd) && checked.cost_usd >= 0 && checked.cost_usd <= 100_000);
        assert.ok(Number.isSafeInteger(checked.prompt_tokens) && checked.prompt_tokens >= 0);
        assert.ok(Number.isSafeInteger(checked.completion_tokens) && checked.completion_tokens >= 0);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("joining the decision's ledger", () => {
  const at = (attempt: number, cost_usd: number): AttemptCharge => ({ ...charge, attempt, cost_usd });

  it('adds the Signalled attempts the ledger lacks, once, in attempt order; the ledger wins', () => {
    const signalled = new Map([
      [1, at(1, 0.5)],
      [2, at(2, 0.02)],
    ]);
    assert.deepEqual(withSignalled([at(1, 0.02), at(3, 0.04)], signalled), [at(1, 0.02), at(2, 0.02), at(3, 0.04)]);
    // Cut off between two attempts: the cancellation carried no ledger.
    assert.deepEqual(withSignalled([], signalled), [at(1, 0.5), at(2, 0.02)]);
    assert.deepEqual(withSignalled([at(1, 0.02)], new Map()), [at(1, 0.02)]);
  });
});
