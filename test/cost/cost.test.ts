// The cost arithmetic on hand-made usages: pricing an attempt, charging a decision's attempts once
// each, the reservation before a decision, the wind-down and the stop, and the price table (top-ups: extend.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { EMPTY_USAGE, remaining, resolveBudget } from '../../common/cost/budget';
import type { AttemptCharge } from '../../common/cost/budget';
import {
  attemptCost,
  chargeAttempts,
  COMPLETION_CAP_TOKENS,
  estimateTokens,
  ledgerOf,
  MAX_ATTEMPT_DETAIL,
  planDecision,
} from '../../common/cost/cost';
import type { LlmPricing } from '../../common/cost/cost';
import { checkAgentInput } from '../../common/input';
import { supportDomain } from '../../domains/support/index';
import { DEFAULT_PRICES, loadPrices, lookUpPrice, unpricedModelMessage } from '../../runtime/prices';
import { agentInput } from '../helpers/harness';

/** $0.001 a prompt token, $0.002 a completion token. */
const PRICING: LlmPricing = { model: 'm', input_usd_per_mtok: 1000, output_usd_per_mtok: 2000, overhead_tokens: 0 };
/** 300 characters: an estimate of 100 prompt tokens, $0.10. */
const PROMPT_CHARS = 300;
const attempt = (n: number, outcome: AttemptCharge['outcome'], prompt: number, completion: number): AttemptCharge => ({
  step: 1,
  attempt: n,
  outcome,
  prompt_tokens: prompt,
  completion_tokens: completion,
  cost_usd: attemptCost({ prompt_tokens: prompt, completion_tokens: completion }, PRICING),
});

describe('pricing an attempt', () => {
  it('charges prompt and completion tokens at their own prices, per million', () => {
    assert.equal(attemptCost({ prompt_tokens: 100, completion_tokens: 20 }, PRICING), 0.14);
    assert.equal(
      attemptCost({ prompt_tokens: 1_000_000, completion_tokens: 1_000_000 }, DEFAULT_PRICES['gpt-4.1-mini']!),
      2,
    );
    assert.equal(attemptCost({ prompt_tokens: 0, completion_tokens: 0 }, PRICING), 0);
  });

  it('estimates a prompt generously (three characters a token)', () => {
    assert.equal(estimateTokens(300), 100);
    assert.equal(estimateTokens(301), 101);
  });
});

describe('charging a decision', () => {
  it('adds every attempt that reported usage, failed ones included, once each', () => {
    const attempts = [attempt(1, 'failed', 50, 10), attempt(2, 'failed', 30, 5), attempt(3, 'ok', 100, 20)];
    const usage = chargeAttempts({ ...EMPTY_USAGE, steps: 1 }, attempts);
    assert.equal(usage.cost_usd, 0.07 + 0.04 + 0.14);
    assert.equal(usage.llm_calls, 3);
    assert.equal(usage.charged_attempts, 3);
    assert.equal(usage.prompt_tokens, 180);
    assert.equal(usage.completion_tokens, 35);
    assert.equal(usage.total_tokens, 215);
    assert.deepEqual(
      usage.attempts?.map((a) => [a.attempt, a.outcome]),
      [
        [1, 'failed'],
        [2, 'failed'],
        [3, 'ok'],
      ],
    );
    // The same decision read again (a replay reads the same history) is the same arithmetic.
    assert.deepEqual(chargeAttempts({ ...EMPTY_USAGE, steps: 1 }, attempts), usage);
  });

  it('keeps the last attempts as detail and the totals exact', () => {
    const many = Array.from({ length: MAX_ATTEMPT_DETAIL + 10 }, (_, i) => attempt(i + 1, 'ok', 1, 1));
    const usage = chargeAttempts(EMPTY_USAGE, many);
    assert.equal(usage.attempts?.length, MAX_ATTEMPT_DETAIL);
    assert.equal(usage.attempts?.[0]?.attempt, 11);
    assert.equal(usage.charged_attempts, MAX_ATTEMPT_DETAIL + 10);
    assert.equal(usage.cost_usd, 0.003 * (MAX_ATTEMPT_DETAIL + 10));
  });

  it('marks the cost unknown once an attempt ran on a model the worker has no price for', () => {
    const priced = chargeAttempts(EMPTY_USAGE, [attempt(1, 'ok', 100, 20)]);
    assert.equal(priced.cost_unknown, undefined);
    const unpriced = { ...attempt(1, 'ok', 100, 20), cost_usd: 0, unpriced: true as const };
    const usage = chargeAttempts(priced, [unpriced]);
    assert.equal(usage.cost_unknown, true);
    assert.equal(usage.total_tokens, 240, 'tokens are still counted');
    assert.equal(chargeAttempts(usage, [attempt(2, 'ok', 1, 1)]).cost_unknown, true, 'and it stays unknown');
  });

  it('reads a ledger from heartbeat or failure details, and nothing from anything else', () => {
    const ledger = [attempt(1, 'failed', 1, 2)];
    assert.deepEqual(ledgerOf({ attempts: ledger }), ledger);
    assert.deepEqual(ledgerOf(undefined), []);
    assert.deepEqual(ledgerOf({ attempts: 'x' }), []);
    assert.deepEqual(ledgerOf({ attempts: [{ attempt: 1 }] }), []);
  });
});

describe('reserving a decision, winding down, stopping', () => {
  const budget = (over: Record<string, number> = {}) => resolveBudget({ max_usd: 10, ...over });
  const spent = (usd: number) => ({ ...EMPTY_USAGE, cost_usd: usd });
  // A full decision: $0.10 of prompt + 512 completion tokens at $0.002 = $1.124.
  const FULL = 0.1 + COMPLETION_CAP_TOKENS * 0.002;

  it('reserves prompt estimate + completion cap, and sends the cap', () => {
    const plan = planDecision(budget(), spent(0), 1, PROMPT_CHARS, PRICING);
    assert.deepEqual(plan, {
      kind: 'decide',
      max_completion_tokens: COMPLETION_CAP_TOKENS,
      reserved_usd: FULL,
      left_usd: 10,
    });
  });

  it('winds down when what is left cannot pay for a tool step and a final answer', () => {
    const justEnough = planDecision(budget(), spent(10 - 2 * FULL), 1, PROMPT_CHARS, PRICING);
    assert.equal(justEnough.kind === 'decide' && justEnough.wind_down, undefined);
    const short = planDecision(budget(), spent(10 - 2 * FULL + 0.01), 1, PROMPT_CHARS, PRICING);
    assert.deepEqual(short, {
      kind: 'decide',
      wind_down: 'max_usd',
      max_completion_tokens: COMPLETION_CAP_TOKENS,
      reserved_usd: FULL,
      // What the decision may spend is carried to the activity: the run's dollars left.
      left_usd: 2.238,
    });
  });

  it('shrinks the completion cap to what is left, down to the smallest useful one', () => {
    // $0.50 left: $0.10 of prompt, $0.40 buys 200 completion tokens.
    const plan = planDecision(budget(), spent(9.5), 1, PROMPT_CHARS, PRICING);
    assert.deepEqual(plan, {
      kind: 'decide',
      wind_down: 'max_usd',
      max_completion_tokens: 200,
      reserved_usd: 0.5,
      left_usd: 0.5,
    });
  });

  it('does not make a call that would not fit: budget_exhausted:usd', () => {
    // $0.30 left: $0.20 buys 100 completion tokens, fewer than a final answer needs.
    assert.deepEqual(planDecision(budget(), spent(9.7), 1, PROMPT_CHARS, PRICING), {
      kind: 'exhausted',
      reason: 'budget_exhausted:usd',
    });
    assert.deepEqual(planDecision(budget(), spent(12), 1, PROMPT_CHARS, PRICING), {
      kind: 'exhausted',
      reason: 'budget_exhausted:usd',
    });
  });

  it('without a dollar budget: no reservation, no cap', () => {
    assert.deepEqual(planDecision(resolveBudget({}), spent(1e6), 1, PROMPT_CHARS, undefined), { kind: 'decide' });
  });

  it('winds down on the last step, with no tool call left, or with tokens for less than two decisions', () => {
    const b = resolveBudget({ max_steps: 3, max_tool_calls: 2 });
    const plan = (usage = EMPTY_USAGE, step = 1, over = b) => planDecision(over, usage, step, PROMPT_CHARS, undefined);
    assert.deepEqual(plan(EMPTY_USAGE, 2), { kind: 'decide' });
    assert.deepEqual(plan(EMPTY_USAGE, 3), { kind: 'decide', wind_down: 'max_steps' });
    assert.deepEqual(plan({ ...EMPTY_USAGE, tool_calls: 2 }, 2), { kind: 'decide', wind_down: 'max_tool_calls' });
    const tokens = resolveBudget({ max_tokens: 2 * (100 + COMPLETION_CAP_TOKENS) + 50 });
    assert.deepEqual(plan(EMPTY_USAGE, 1, tokens), { kind: 'decide' });
    assert.deepEqual(plan({ ...EMPTY_USAGE, total_tokens: 51 }, 1, tokens), {
      kind: 'decide',
      wind_down: 'max_tokens',
    });
  });

  it('shows dollars left in `remaining`', () => {
    assert.equal(remaining(budget(), spent(2.5)).usd, 7.5);
    assert.equal(remaining(resolveBudget({}), spent(2.5)).usd, null);
  });
});

describe('the run input', () => {
  it('takes budget.max_usd and topup_wait_seconds, bounded', () => {
    assert.equal(
      checkAgentInput(agentInput({ budget: { max_usd: 0.5 }, topup_wait_seconds: 60 }), supportDomain).ok,
      true,
    );
    const tooMuch = checkAgentInput(agentInput({ budget: { max_usd: 1e9 } }), supportDomain);
    assert.match(tooMuch.ok ? '' : tooMuch.error, /^invalid run input: budget.max_usd: /);
    const negative = checkAgentInput(agentInput({ topup_wait_seconds: 0 }), supportDomain);
    assert.match(negative.ok ? '' : negative.error, /^invalid run input: topup_wait_seconds: /);
  });
});

describe('the price table', () => {
  const file = (content: string) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'prices-'));
    const name = path.join(dir, 'prices.json');
    writeFileSync(name, content);
    return name;
  };

  it('has the default model, and a file adds or overrides models', () => {
    assert.ok(lookUpPrice('gpt-4.1-mini', loadPrices({})));
    const table = loadPrices({
      AGENT_PRICES_FILE: file(
        '{"my-model": {"input_usd_per_mtok": 1, "output_usd_per_mtok": 2}, "gpt-4.1-mini": {"input_usd_per_mtok": 0, "output_usd_per_mtok": 0}}',
      ),
    });
    assert.deepEqual(lookUpPrice('my-model', table), { input_usd_per_mtok: 1, output_usd_per_mtok: 2 });
    assert.deepEqual(lookUpPrice('gpt-4.1-mini', table), { input_usd_per_mtok: 0, output_usd_per_mtok: 0 });
  });

  it('an unknown model has no price, and the refusal of a dollar budget on it is one line saying what to do', () => {
    assert.equal(lookUpPrice('llama-local', loadPrices({})), undefined);
    assert.equal(lookUpPrice('constructor', loadPrices({})), undefined, 'not an Object.prototype member');
    const message = unpricedModelMessage('llama-local');
    assert.match(
      message,
      /^no price for model "llama-local", so a dollar budget \(--max-usd\) cannot be kept: add it to a JSON file named by AGENT_PRICES_FILE/,
    );
    assert.ok(!message.includes('\n'));
  });

  it('a broken prices file is one line saying what to do', () => {
    assert.throws(() => loadPrices({ AGENT_PRICES_FILE: file('{') }), /cannot read it as JSON/);
    assert.throws(
      () => loadPrices({ AGENT_PRICES_FILE: file('{"m": {"input_usd_per_mtok": -1, "output_usd_per_mtok": 1}}') }),
      /"m" needs input_usd_per_mtok and output_usd_per_mtok/,
    );
    assert.throws(() => loadPrices({ AGENT_PRICES_FILE: '/nonexistent/prices.json' }), /AGENT_PRICES_FILE/);
  });
});
