// Run budgets and their arithmetic. Pure: the workflow passes in what it has used so far.

export interface Budget {
  max_steps: number;
  max_tool_calls: number;
  max_seconds: number;
  /** Total LLM tokens (prompt + completion) a run may spend; 0 means no limit. */
  max_tokens: number;
  /** US dollars the run's LLM calls may cost (priced per attempt, see common/cost/cost.ts); 0 means no limit. */
  max_usd: number;
  /** Times a read may be repeated with nothing new in between before the run ends loop_detected; absent: 2 (workflows/agent/repeats.ts). */
  max_repeats?: number;
}

export const DEFAULT_BUDGET: Budget = { max_steps: 8, max_tool_calls: 6, max_seconds: 60, max_tokens: 0, max_usd: 0 };

export interface Usage {
  steps: number;
  tool_calls: number;
  llm_calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Of the prompt tokens, those the provider served from its prompt cache (charged at the cached price; absent in runs recorded before it). */
  cached_prompt_tokens?: number;
  elapsed_ms: number;
  /** What the run's LLM attempts cost, every attempt that reported usage (absent in runs recorded before it). */
  cost_usd?: number;
  /** The last attempts charged, one entry per attempt (bounded: see MAX_ATTEMPT_DETAIL in common/cost/cost.ts). */
  attempts?: AttemptCharge[];
  /** How many attempts were charged in all (attempts keeps only the last ones). */
  charged_attempts?: number;
  /** Some attempts ran on a model the worker has no price for: cost_usd counts only the priced ones. */
  cost_unknown?: true;
}

/** One LLM attempt that reported usage, as the decide activity priced it. */
export interface AttemptCharge {
  step: number;
  /** Temporal's attempt number of the decide activity (1 = first try). */
  attempt: number;
  /** ok: the attempt's answer is the decision; failed: the attempt failed after reporting usage and was retried (or was the last). */
  outcome: 'ok' | 'failed';
  prompt_tokens: number;
  completion_tokens: number;
  /** Of the prompt tokens, those served from the provider's prompt cache (absent: none). */
  cached_prompt_tokens?: number;
  cost_usd: number;
  /** The worker had no price for its model: cost_usd is 0 and the cost is unknown. */
  unpriced?: true;
  /** The server reported unusable counts: the tokens are the worker's estimate (docs/cost.md). */
  estimated?: true;
}

export const EMPTY_USAGE: Usage = {
  steps: 0,
  tool_calls: 0,
  llm_calls: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  cached_prompt_tokens: 0,
  elapsed_ms: 0,
};

export interface Remaining {
  steps: number;
  tool_calls: number;
  seconds: number;
  tokens: number | null;
  /** Dollars left; null when the run has no dollar budget. */
  usd?: number | null;
}

export function resolveBudget(partial: Partial<Budget> | undefined): Budget {
  const budget = { ...DEFAULT_BUDGET, ...(partial ?? {}) };
  for (const [key, value] of Object.entries(budget)) {
    if (key === 'max_usd') {
      if (!Number.isFinite(value) || value < 0)
        throw new RangeError(`budget.max_usd must be a non-negative number, got ${String(value)}`);
      continue;
    }
    if (!Number.isFinite(value) || value < 0 || !Number.isInteger(value)) {
      throw new RangeError(`budget.${key} must be a non-negative integer, got ${String(value)}`);
    }
  }
  if (budget.max_steps < 1) throw new RangeError('budget.max_steps must be at least 1');
  if (budget.max_seconds < 1) throw new RangeError('budget.max_seconds must be at least 1');
  return budget;
}

/**
 * Dollars left of `limitUsd` once `spentUsd` is charged, unrounded and possibly negative: the one
 * place this is computed, for a run (its budget, its usage) and for a decision's attempts (what the
 * workflow let the decision spend, the earlier attempts' charges).
 */
export function usdLeft(limitUsd: number, spentUsd: number): number {
  return limitUsd - spentUsd;
}

export function remaining(budget: Budget, usage: Usage): Remaining {
  return {
    steps: Math.max(0, budget.max_steps - usage.steps),
    tool_calls: Math.max(0, budget.max_tool_calls - usage.tool_calls),
    seconds: Math.max(0, budget.max_seconds - usage.elapsed_ms / 1000),
    tokens: budget.max_tokens > 0 ? Math.max(0, budget.max_tokens - usage.total_tokens) : null,
    usd: budget.max_usd > 0 ? Math.max(0, roundUsd(usdLeft(budget.max_usd, usage.cost_usd ?? 0))) : null,
  };
}

/** Checked before each decision: which budget, if any, forbids another step. */
export function budgetExhausted(budget: Budget, usage: Usage): 'max_steps' | 'max_seconds' | 'max_tokens' | null {
  if (usage.steps >= budget.max_steps) return 'max_steps';
  if (usage.elapsed_ms >= budget.max_seconds * 1000) return 'max_seconds';
  if (budget.max_tokens > 0 && usage.total_tokens >= budget.max_tokens) return 'max_tokens';
  return null;
}

export function addTokens(
  usage: Usage,
  tokens: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cached_prompt_tokens?: number },
): Usage {
  return {
    ...usage,
    llm_calls: usage.llm_calls + 1,
    prompt_tokens: usage.prompt_tokens + tokens.prompt_tokens,
    completion_tokens: usage.completion_tokens + tokens.completion_tokens,
    total_tokens: usage.total_tokens + tokens.total_tokens,
    cached_prompt_tokens:
      (usage.cached_prompt_tokens ?? 0) + Math.min(tokens.cached_prompt_tokens ?? 0, tokens.prompt_tokens),
  };
}

/** Dollars kept to nine decimals, so sums of many small prices do not drift in what runs show. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}
