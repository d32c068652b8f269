// Idempotency keys come from stable facts of the run, so a retried or replayed activity sends
// the same key and the system of record can refuse to repeat an effect.
export function decideKey(workflowId: string, step: number): string {
  return `${workflowId}:decide:${step}`;
}

export function toolKey(workflowId: string, step: number, tool: string, argsHash: string): string {
  return `${workflowId}:${step}:${tool}:${argsHash}`;
}
