// What the workflow tells the worker's metrics, through a sink. Sinks are not called while a
// history is replayed, so a run counts once however often a worker replays it (a worker that
// crashes before its workflow task completes may count that task's calls twice: at-least-once).
// The worker implements the sink in worker/metrics.ts; nothing here produces a command.
import { proxySinks } from '@temporalio/workflow';
import type { Sinks } from '@temporalio/workflow';
import type { AttemptCharge } from '../cost/budget';

export type ToolOutcome = 'ok' | 'error' | 'failed' | 'denied' | 'rejected' | 'approval_timeout';

export interface AgentMetricsSinks extends Sinks {
  agentMetrics: {
    runStarted(): void;
    step(): void;
    /** ok: the tool answered ok; error: it answered ok=false; failed: the activity failed; denied: the gateway refused. */
    toolCall(tool: string, outcome: ToolOutcome): void;
    runEnded(status: string, stopReason: string): void;
    /** One LLM attempt that reported usage, as the run charged it (ok: its answer was the decision). */
    llmAttempt(outcome: string, promptTokens: number, completionTokens: number, costUsd: number): void;
  };
}

export const { agentMetrics } = proxySinks<AgentMetricsSinks>();

/** The LLM attempts a decision was charged for, one metric each. */
export function recordAttempts(attempts: readonly AttemptCharge[]): void {
  for (const a of attempts) agentMetrics.llmAttempt(a.outcome, a.prompt_tokens, a.completion_tokens, a.cost_usd);
}
