// The cost arithmetic of a run: what an LLM attempt costs, what a decision must reserve before it
// is made, and when a run winds down (asks for its final answer) instead of taking another step.
// Pure and deterministic: the workflow runs it on data in its history (prices come from the
// worker, through the llm_pricing local activity and the decide activity's output); never reads a file.
import { roundUsd, usdLeft } from './budget';
import type { AttemptCharge, Budget, Usage } from './budget';

/** A model's price, US dollars per million tokens. */
export interface ModelPrice {
  input_usd_per_mtok: number;
  output_usd_per_mtok: number;
  /** Prompt tokens the provider served from its prompt cache; absent: the input price. */
  cached_input_usd_per_mtok?: number;
}

/** What the worker tells a run about its model (the llm_pricing local activity): recorded once in its history. */
export interface LlmPricing extends ModelPrice {
  model: string;
  /** Tokens of the system prompt and message framing, added to the estimate of each decision's prompt. */
  overhead_tokens: number;
}

/** The completion cap a decision asks for when the budget allows it (an action is a few hundred tokens). */
export const COMPLETION_CAP_TOKENS = 512;
/** Below this cap a decision is not worth making: a final answer might not fit. */
export const MIN_COMPLETION_TOKENS = 128;
/** Per-attempt detail kept in `usage.attempts` (the totals stay exact). */
export const MAX_ATTEMPT_DETAIL = 50;

/**
 * What one attempt's tokens cost at a price: the cached part of the prompt (never more than the
 * prompt) at the cached price, the rest of it at the input price, the completion at the output price.
 */
export function attemptCost(
  tokens: { prompt_tokens: number; completion_tokens: number; cached_prompt_tokens?: number },
  price: ModelPrice,
): number {
  const cached = cachedOf(tokens);
  const cachedPrice = price.cached_input_usd_per_mtok ?? price.input_usd_per_mtok;
  return roundUsd(
    ((tokens.prompt_tokens - cached) * price.input_usd_per_mtok +
      cached * cachedPrice +
      tokens.completion_tokens * price.output_usd_per_mtok) /
      1e6,
  );
}

/** The cached prompt tokens an attempt reported: 0 unless 0 ≤ cached ≤ prompt (more is not believed). */
export function cachedOf(tokens: { prompt_tokens: number; cached_prompt_tokens?: number }): number {
  const cached = tokens.cached_prompt_tokens ?? 0;
  return Number.isSafeInteger(cached) && cached > 0 && cached <= tokens.prompt_tokens ? cached : 0;
}

/** The token counts an attempt is charged, and whether any of them is the worker's estimate. */
export interface ChargedTokens {
  prompt_tokens: number;
  completion_tokens: number;
  cached_prompt_tokens?: number;
  estimated?: true;
}

/**
 * The tokens to charge for an attempt's reported usage. No usage at all is 0; in a usage that is
 * there, a count that is missing, null or unusable (negative, not an integer, a string, beyond 2^53) is replaced by the
 * estimate (the prompt from the request's size, the completion at the cap sent), so an attempt
 * that reported nonsense is charged conservatively, never free. Cached tokens count only when
 * 0 ≤ cached ≤ a reported prompt; otherwise the whole prompt is priced at the input price.
 */
export function chargedTokens(
  usage: unknown,
  estimate: { prompt_tokens: number; completion_tokens: number },
): ChargedTokens {
  const counts = (typeof usage === 'object' && usage !== null ? usage : {}) as Record<string, unknown>;
  // No usage at all counts 0; a usage that is there ("lots", {prompt_tokens: null}, other keys) and
  // misses a count is estimated, so an answered attempt is never free.
  const reported = usage !== undefined && usage !== null;
  let estimated = false;
  const read = (value: unknown, fallback: number): number => {
    if ((value === undefined || value === null) && !reported) return 0;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
    estimated = true;
    return fallback;
  };
  const prompt = read(counts.prompt_tokens, estimate.prompt_tokens);
  const completion = read(counts.completion_tokens, estimate.completion_tokens);
  const details = counts.prompt_tokens_details;
  const cachedReported =
    typeof details === 'object' && details !== null ? (details as Record<string, unknown>).cached_tokens : undefined;
  const cached = estimated ? 0 : cachedOf({ prompt_tokens: prompt, cached_prompt_tokens: cachedReported as number });
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    ...(cached > 0 ? { cached_prompt_tokens: cached } : {}),
    ...(estimated ? { estimated: true as const } : {}),
  };
}

/**
 * A rough upper estimate of a prompt's tokens from its characters: tokenizers give about four
 * characters a token for English and JSON, so three leaves room. The real count settles it.
 */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 3);
}

/** Adds the attempts one decision was charged for (each counted once: they come from its history). */
export function chargeAttempts(usage: Usage, attempts: readonly AttemptCharge[]): Usage {
  let next: Usage = { ...usage, cost_usd: usage.cost_usd ?? 0 };
  for (const a of attempts) {
    next = {
      ...next,
      llm_calls: next.llm_calls + 1,
      prompt_tokens: next.prompt_tokens + a.prompt_tokens,
      completion_tokens: next.completion_tokens + a.completion_tokens,
      total_tokens: next.total_tokens + a.prompt_tokens + a.completion_tokens,
      cached_prompt_tokens: (next.cached_prompt_tokens ?? 0) + cachedOf(a),
      cost_usd: roundUsd((next.cost_usd ?? 0) + a.cost_usd),
      charged_attempts: (next.charged_attempts ?? 0) + 1,
      attempts: [...(next.attempts ?? []), a].slice(-MAX_ATTEMPT_DETAIL),
      ...(a.unpriced ? { cost_unknown: true as const } : {}),
    };
  }
  return next;
}

/** The attempts in a decide activity's heartbeat or failure details (`{attempts: [...]}`), if that is what they are. */
export function ledgerOf(details: unknown): AttemptCharge[] {
  const attempts = (details as { attempts?: unknown } | undefined)?.attempts;
  if (!Array.isArray(attempts)) return [];
  return attempts.filter(
    (a): a is AttemptCharge =>
      typeof a === 'object' &&
      a !== null &&
      typeof (a as AttemptCharge).attempt === 'number' &&
      typeof (a as AttemptCharge).cost_usd === 'number' &&
      typeof (a as AttemptCharge).prompt_tokens === 'number' &&
      typeof (a as AttemptCharge).completion_tokens === 'number',
  );
}

/**
 * The completion cap one LLM attempt can pay for with `leftUsd`, its prompt estimated at
 * `promptTokens` and its cap at most `maxCap`; undefined when not even the smallest useful cap
 * (or the prompt alone) fits. The decide activity asks this before every attempt, retries included.
 */
export function attemptCap(
  leftUsd: number,
  promptTokens: number,
  price: ModelPrice,
  maxCap: number,
): number | undefined {
  const promptUsd = (promptTokens * price.input_usd_per_mtok) / 1e6;
  if (!(leftUsd >= promptUsd)) return undefined;
  const perToken = price.output_usd_per_mtok / 1e6;
  // The epsilon keeps binary fractions ($0.476 / $0.002 = 237.99999999999997) from losing a token.
  const affordable = perToken > 0 ? Math.floor(roundUsd(leftUsd - promptUsd) / perToken + 1e-6) : maxCap;
  const cap = Math.min(maxCap, affordable);
  return cap >= MIN_COMPLETION_TOKENS ? cap : undefined;
}

/** What the attempts in a ledger were charged, together. */
export function ledgerUsd(attempts: readonly AttemptCharge[]): number {
  return roundUsd(attempts.reduce((sum, a) => sum + a.cost_usd, 0));
}

/** Why a run winds down: the budget that cannot pay for a tool step plus a final answer. */
export type WindDownReason = 'max_usd' | 'max_steps' | 'max_tool_calls' | 'max_tokens';

/** The next decision: made in full, made as a wind-down (final answer asked for), or not made at all. */
export type DecisionPlan =
  | {
      kind: 'decide';
      wind_down?: WindDownReason;
      max_completion_tokens?: number;
      reserved_usd?: number;
      /** What the decision may spend, every attempt together: the run's dollars left (the decide activity's left_usd). */
      left_usd?: number;
    }
  | { kind: 'exhausted'; reason: 'budget_exhausted:usd' };

/**
 * Before a decision. `promptChars` is the size of the decision's payload; `pricing` is known when
 * the run has a dollar budget. Steps: the decision is the last one the budget allows. Tool calls:
 * none left. Tokens and dollars: what is left cannot pay for two decisions (a tool step, then a
 * final answer) at their worst case. A dollar budget that cannot pay even for one decision with the
 * smallest useful completion cap means no call is made.
 */
export function planDecision(
  budget: Budget,
  usage: Usage,
  step: number,
  promptChars: number,
  pricing: LlmPricing | undefined,
): DecisionPlan {
  const promptTokens = estimateTokens(promptChars) + (pricing?.overhead_tokens ?? 0);
  let windDown: WindDownReason | undefined;
  let cap: number | undefined;
  let reserved: number | undefined;
  let leftUsd: number | undefined;
  if (budget.max_usd > 0 && pricing) {
    const left = usdLeft(budget.max_usd, usage.cost_usd ?? 0);
    const promptUsd = (promptTokens * pricing.input_usd_per_mtok) / 1e6;
    const perToken = pricing.output_usd_per_mtok / 1e6;
    const affordable = perToken > 0 ? Math.floor((left - promptUsd) / perToken) : COMPLETION_CAP_TOKENS;
    if (affordable < MIN_COMPLETION_TOKENS) return { kind: 'exhausted', reason: 'budget_exhausted:usd' };
    cap = Math.min(COMPLETION_CAP_TOKENS, affordable);
    reserved = roundUsd(promptUsd + cap * perToken);
    leftUsd = roundUsd(left);
    const fullDecision = promptUsd + COMPLETION_CAP_TOKENS * perToken;
    if (left < 2 * fullDecision) windDown = 'max_usd';
  }
  windDown ??=
    step >= budget.max_steps
      ? 'max_steps'
      : usage.tool_calls >= budget.max_tool_calls
        ? 'max_tool_calls'
        : budget.max_tokens > 0 && budget.max_tokens - usage.total_tokens < 2 * (promptTokens + COMPLETION_CAP_TOKENS)
          ? 'max_tokens'
          : undefined;
  return {
    kind: 'decide',
    ...(windDown ? { wind_down: windDown } : {}),
    ...(cap !== undefined ? { max_completion_tokens: cap, reserved_usd: reserved, left_usd: leftUsd } : {}),
  };
}

/** What the model is told when the run winds down (in the decision payload, next to the goal). */
export function windDownNotice(reason: WindDownReason): string {
  const what: Record<WindDownReason, string> = {
    max_usd: 'the dollar budget',
    max_steps: 'the step budget',
    max_tool_calls: 'the tool-call budget',
    max_tokens: 'the token budget',
  };
  return (
    `The run is winding down: ${what[reason]} cannot pay for another tool step and a final answer. ` +
    'Answer now with {"kind":"final","answer":...} using what you already know; say what is missing, if anything.'
  );
}
