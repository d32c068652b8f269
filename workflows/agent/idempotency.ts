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
 * Whose world a run's tools act on: the workflow id, or in a domain with state per conversation the
 * conversation, `<workflow id>/<first run id of the chain>` (the same across continue-as-new).
 */
export function stateKey(workflowId: string, chainRunId: string, perConversation: boolean): string {
  return perConversation ? `${workflowId}/${chainRunId}` : workflowId;
}

/**
 * A tool call's key: `<state key>:<step>:<tool>:<args hash>`, the state key being the workflow id
 * (or the conversation, see stateKey). Shared by every run of one workflow
 * id on purpose: a run re-done after `temporal workflow reset`, or started again under the same
 * id, finds the first one's refund by key and reconciles instead of paying twice.
 */
export function toolKey(stateKey: string, step: number, tool: string, argsHash: string): string {
  return `${stateKey}:${step}:${tool}:${argsHash}`;
}
