// Idempotency keys come from stable facts of the run, so a retried or replayed activity sends
// the same key and the system of record can refuse to repeat an effect.

/**
 * The LLM decision's key: `<workflow id>:<first run id of the chain>:decide:<step>`. The chain's
 * first run id keeps it the same across retries, replays and continue-as-new, and makes it differ
 * when a workflow id is reused for another run (whose goal differs), so a provider that caches by
 * key never answers one run with another's decision.
 */
export function decideKey(workflowId: string, chainRunId: string, step: number): string {
  return `${workflowId}:${chainRunId}:decide:${step}`;
}

/**
 * A tool call's key: `<workflow id>:<step>:<tool>:<args hash>`. Shared by every run of one workflow
 * id on purpose: a run re-done after `temporal workflow reset`, or started again under the same
 * id, finds the first one's refund by key and reconciles instead of paying twice.
 */
export function toolKey(workflowId: string, step: number, tool: string, argsHash: string): string {
  return `${workflowId}:${step}:${tool}:${argsHash}`;
}
