// The dollar budget's promise, property-based: whatever the provider reports (paid failures on
// every attempt, prompts of any text, completions up to the cap it was sent), the run's charges
// never exceed max_usd by more than the prompt estimate's error on one attempt, and that error is
// at most the bound docs/cost.md states (8/3 of a token per payload character, 2/3 per system
// prompt character, at the input price). The run is the workflow's planDecision before each step
// and the decide activity's check (attemptCap over what the decision has left) before each attempt.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EMPTY_USAGE, resolveBudget, roundUsd } from '../../common/cost/budget';
import type { AttemptCharge, Usage } from '../../common/cost/budget';
import {
  attemptCap,
  attemptCost,
  chargeAttempts,
  COMPLETION_CAP_TOKENS,
  estimateTokens,
  ledgerUsd,
  MIN_COMPLETION_TOKENS,
  planDecision,
} from '../../common/cost/cost';
import type { LlmPricing, ModelPrice } from '../../common/cost/cost';
import { SYSTEM_PROMPT } from '../../activities/decide/system-prompt';

/** Tokens a chat request adds around its two messages (OpenAI's format: a few per message); the estimate adds 16. */
const FRAMING_TOKENS = 16;
const OVERHEAD_TOKENS = estimateTokens(SYSTEM_PROMPT.length) + FRAMING_TOKENS;
/** Dollars are kept to nine decimals (roundUsd): a few rounding steps of slack. */
const EPSILON_USD = 1e-7;
const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

/** What one attempt of the provider does: the share of the worst case it reports, and whether it answers. */
interface ProviderAttempt {
  answers: boolean;
  /** Of the most prompt tokens a byte-level tokenizer can make of the request (one a byte). */
  promptShare: number;
  /** Of the completion cap it was sent. */
  completionShare: number;
}

interface Step {
  payload: string;
  attempts: ProviderAttempt[];
}

interface Outcome {
  usage: Usage;
  sent: number;
  /** The largest prompt underestimate of an attempt that was sent, in dollars. */
  worstUnderUsd: number;
  /** The longest payload sent, in characters. */
  longestPayload: number;
}

/**
 * A run: before each step the workflow's plan; before each attempt the activity's check against
 * what the decision has left (`perAttemptCheck: false` is the old behaviour: every retry sent with
 * the first attempt's cap).
 */
function simulate(maxUsd: number, price: ModelPrice, steps: Step[], perAttemptCheck = true): Outcome {
  const pricing: LlmPricing = { model: 'm', ...price, overhead_tokens: OVERHEAD_TOKENS };
  const budget = resolveBudget({ max_usd: maxUsd, max_steps: 100, max_tool_calls: 100 });
  let usage: Usage = { ...EMPTY_USAGE };
  let sent = 0;
  let worstUnderUsd = 0;
  let longestPayload = 0;
  for (const [i, step] of steps.entries()) {
    const plan = planDecision(budget, usage, i + 1, step.payload.length, pricing);
    if (plan.kind === 'exhausted') break;
    const leftUsd = roundUsd(maxUsd - (usage.cost_usd ?? 0));
    const estimate = estimateTokens(step.payload.length) + OVERHEAD_TOKENS;
    const ledger: AttemptCharge[] = [];
    let answered = false;
    for (const [n, attempt] of step.attempts.entries()) {
      const cap = perAttemptCheck
        ? attemptCap(leftUsd - ledgerUsd(ledger), estimate, price, plan.max_completion_tokens ?? COMPLETION_CAP_TOKENS)
        : plan.max_completion_tokens;
      if (cap === undefined) break;
      sent++;
      const mostPrompt = utf8(SYSTEM_PROMPT) + utf8(step.payload) + FRAMING_TOKENS;
      const prompt_tokens = Math.round(attempt.promptShare * mostPrompt);
      const completion_tokens = Math.round(attempt.completionShare * cap);
      worstUnderUsd = Math.max(worstUnderUsd, ((prompt_tokens - estimate) * price.input_usd_per_mtok) / 1e6);
      longestPayload = Math.max(longestPayload, step.payload.length);
      const counts = { prompt_tokens, completion_tokens };
      ledger.push({
        step: i + 1,
        attempt: n + 1,
        outcome: attempt.answers ? 'ok' : 'failed',
        ...counts,
        cost_usd: attemptCost(counts, price),
      });
      if (attempt.answers) {
        answered = true;
        break;
      }
    }
    usage = chargeAttempts({ ...usage, steps: i + 1 }, ledger);
    if (!answered) break; // the decision failed for good (or was not sent): the run ends
  }
  return { usage, sent, worstUnderUsd, longestPayload };
}

/** docs/cost.md's bound: one attempt's prompt underestimate, at most 8/3 token a payload character and 2/3 a system prompt one. */
function statedBoundUsd(longestPayload: number, price: ModelPrice): number {
  return (((8 / 3) * longestPayload + (2 / 3) * SYSTEM_PROMPT.length) * price.input_usd_per_mtok) / 1e6;
}

const priceArb = fc.record({
  input_usd_per_mtok: fc.oneof(fc.constant(0), fc.double({ min: 0.01, max: 5000, noNaN: true })),
  output_usd_per_mtok: fc.oneof(fc.constant(0), fc.double({ min: 0.01, max: 5000, noNaN: true })),
});
const attemptArb = fc.record({
  answers: fc.boolean(),
  promptShare: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
  completionShare: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
});
const stepArb = fc.record({
  // Any text: ASCII JSON, and characters of up to four UTF-8 bytes (the worst case for the estimate).
  payload: fc.oneof(fc.string({ maxLength: 3000 }), fc.string({ unit: 'binary', maxLength: 1500 })),
  attempts: fc.array(attemptArb, { minLength: 1, maxLength: 6 }),
});
const runArb = fc.record({
  maxUsd: fc.double({ min: 0.001, max: 20, noNaN: true }),
  price: priceArb,
  steps: fc.array(stepArb, { minLength: 1, maxLength: 8 }),
});

describe('the dollar budget across retries', () => {
  it('never charges more than max_usd plus one attempt’s prompt underestimate, itself within the stated bound', () => {
    fc.assert(
      fc.property(runArb, ({ maxUsd, price, steps }) => {
        const { usage, worstUnderUsd, longestPayload } = simulate(maxUsd, price, steps);
        const charged = usage.cost_usd ?? 0;
        assert.ok(
          charged <= maxUsd + Math.max(0, worstUnderUsd) + EPSILON_USD,
          `charged ${charged} > max_usd ${maxUsd} + underestimate ${worstUnderUsd}`,
        );
        assert.ok(worstUnderUsd <= statedBoundUsd(longestPayload, price) + 1e-12);
        assert.ok(charged <= maxUsd + statedBoundUsd(longestPayload, price) + EPSILON_USD);
      }),
      { numRuns: 2000 },
    );
  });

  it('with a prompt the estimate does not miss (or free prompts), never more than max_usd', () => {
    const exact = fc.record({
      maxUsd: fc.double({ min: 0.001, max: 20, noNaN: true }),
      price: priceArb,
      steps: fc.array(
        fc.record({
          payload: fc.string({ maxLength: 3000 }),
          attempts: fc.array(
            fc.record({
              answers: fc.boolean(),
              // At most the estimate: a quarter of a token a character, as English and JSON come out.
              promptShare: fc.double({ min: 0, max: 0.25, noNaN: true }),
              completionShare: fc.double({ min: 0, max: 1, noNaN: true }),
            }),
            { minLength: 1, maxLength: 6 },
          ),
        }),
        { minLength: 1, maxLength: 8 },
      ),
    });
    fc.assert(
      fc.property(exact, ({ maxUsd, price, steps }) => {
        const { usage } = simulate(maxUsd, price, steps);
        assert.ok((usage.cost_usd ?? 0) <= maxUsd + EPSILON_USD, `charged ${usage.cost_usd} > ${maxUsd}`);
      }),
      { numRuns: 2000 },
    );
  });

  it('the retries of a decision were the overspend: without the check, paid failures run past the budget', () => {
    // One decision, three paid failures of 512 tokens at $0.002: $3.072 against $1.20.
    const steps: Step[] = [
      { payload: '{}', attempts: Array(3).fill({ answers: false, promptShare: 0, completionShare: 1 }) },
    ];
    const price = { input_usd_per_mtok: 0, output_usd_per_mtok: 2000 };
    assert.equal(simulate(1.2, price, steps, false).usage.cost_usd, 3.072);
    const checked = simulate(1.2, price, steps);
    assert.equal(checked.usage.cost_usd, 1.024);
    assert.equal(checked.sent, 1);
  });
});

describe('the cap of one attempt', () => {
  const price = { input_usd_per_mtok: 1000, output_usd_per_mtok: 2000 };

  it('is what is left after the prompt estimate, up to the cap asked for', () => {
    // $0.10 of prompt (100 tokens), then $0.002 a completion token.
    assert.equal(attemptCap(10, 100, price, 512), 512);
    assert.equal(attemptCap(0.1 + 0.476, 100, price, 512), 238);
    assert.equal(attemptCap(0.1 + 0.002 * MIN_COMPLETION_TOKENS, 100, price, 512), MIN_COMPLETION_TOKENS);
  });

  it('is none when the smallest useful cap, or the prompt alone, does not fit', () => {
    assert.equal(attemptCap(0.1 + 0.002 * (MIN_COMPLETION_TOKENS - 1), 100, price, 512), undefined);
    assert.equal(attemptCap(0.05, 100, { input_usd_per_mtok: 1000, output_usd_per_mtok: 0 }, 512), undefined);
    assert.equal(attemptCap(-1, 0, { input_usd_per_mtok: 0, output_usd_per_mtok: 0 }, 512), undefined);
    assert.equal(attemptCap(Number.NaN, 0, price, 512), undefined);
  });

  it('free completions: the cap asked for', () => {
    assert.equal(attemptCap(1, 100, { input_usd_per_mtok: 1000, output_usd_per_mtok: 0 }, 300), 300);
  });
});
