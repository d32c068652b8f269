import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  addTokens,
  budgetExhausted,
  DEFAULT_BUDGET,
  EMPTY_USAGE,
  remaining,
  resolveBudget,
} from '../../common/cost/budget';

describe('budget arithmetic', () => {
  it('fills defaults and rejects nonsense', () => {
    assert.deepEqual(resolveBudget(undefined), DEFAULT_BUDGET);
    assert.equal(resolveBudget({ max_steps: 3 }).max_steps, 3);
    assert.throws(() => resolveBudget({ max_steps: 0 }), /max_steps/);
    assert.throws(() => resolveBudget({ max_seconds: 1.5 }), /max_seconds/);
    assert.throws(() => resolveBudget({ max_tool_calls: -1 }), /max_tool_calls/);
  });

  it('says which budget is exhausted, steps first', () => {
    const budget = resolveBudget({ max_steps: 2, max_seconds: 10, max_tokens: 100 });
    assert.equal(budgetExhausted(budget, { ...EMPTY_USAGE, steps: 1 }), null);
    assert.equal(budgetExhausted(budget, { ...EMPTY_USAGE, steps: 2 }), 'max_steps');
    assert.equal(budgetExhausted(budget, { ...EMPTY_USAGE, elapsed_ms: 10_000 }), 'max_seconds');
    assert.equal(budgetExhausted(budget, { ...EMPTY_USAGE, total_tokens: 100 }), 'max_tokens');
    assert.equal(budgetExhausted({ ...budget, max_tokens: 0 }, { ...EMPTY_USAGE, total_tokens: 1e9 }), null);
  });

  it('computes what is left and adds token usage', () => {
    const budget = resolveBudget({ max_steps: 5, max_tool_calls: 4, max_seconds: 20, max_tokens: 1000 });
    const used = addTokens(
      { ...EMPTY_USAGE, steps: 2, tool_calls: 1, elapsed_ms: 5500 },
      { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    );
    assert.equal(used.llm_calls, 1);
    assert.deepEqual(remaining(budget, used), { steps: 3, tool_calls: 3, seconds: 14.5, tokens: 880, usd: null });
    assert.deepEqual(remaining(budget, { ...used, steps: 9, elapsed_ms: 99_000 }), {
      steps: 0,
      tool_calls: 3,
      seconds: 0,
      tokens: 880,
      usd: null,
    });
  });
});
