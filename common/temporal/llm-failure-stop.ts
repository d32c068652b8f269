// Why a run stops when its LLM decision failed for good: the one mapping the agent workflow uses,
// shared with the in-process baseline of the benchmark so both report the same stop reason.
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import type { StopReason } from '../stop-reasons';
import { LLM_BUDGET, LLM_TIMEOUT } from '../agent-messages';

/** An LLM decision that failed for good: timeouts (ours or Temporal's), the budget, everything else. */
export function llmFailureStop(err: unknown): StopReason {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) return 'llm_timeout';
  if (cause instanceof ApplicationFailure && cause.type === LLM_TIMEOUT) return 'llm_timeout';
  if (cause instanceof ApplicationFailure && cause.type === LLM_BUDGET) return 'budget_exhausted:usd';
  return 'llm_error';
}
