// The kill switch's moves on one run chain (client/run-chain.ts): request a cancel, wait for the
// run to end and read how it ended, or terminate it. Shared by `cancel ID` and `cancel --stuck`.
import type { Client } from '@temporalio/client';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { AGENT_STOP_REASON } from '../common/temporal/search-attributes';
import { EFFECTS_MEMO } from '../common/types';
import type { AgentResult, EffectCounts } from '../common/types';
import { cancelRun, runResult } from '../client/run-control';
import { RunNotFoundError } from '../client/run-id';
import { grpcCodeOf, isDeadlineExceeded, withDeadline } from './cli-context';
import { effectCountsOf, formatEffectCounts, formatEffects } from './format-effects';
import { EXIT } from '../client/agent-error';
import { formatUsage } from './format';
import type { RunChain } from '../client/run-chain';

/** Exit code of `cancel`: the cancel was requested but the run had not ended when the grace period was over. */
export const EXIT_STILL_RUNNING = EXIT.STILL_RUNNING;

/** How long reading an ended run's result may take. */
const READ_TIMEOUT_MS = 5_000;

/**
 * Requests a cancel of the chain's current run (whichever run it has continued as new to), with
 * the reason in its history. 'ended': the chain has no running run any more.
 */
export async function requestCancel(client: Client, chain: RunChain, reason: string): Promise<'requested' | 'ended'> {
  try {
    await cancelRun(client, chain.workflowId, reason, chain.firstRunId);
  } catch (err) {
    if (err instanceof RunNotFoundError) return 'ended'; // no run of this chain any more
    throw err;
  }
  // Temporal accepts a cancel of a run that has just closed as a no-op: look whether it had.
  const now = await client.workflow.getHandle(chain.workflowId).describe();
  return now.status.name === 'RUNNING' || now.status.name === 'CANCELLED' ? 'requested' : 'ended';
}

/** Terminates the chain's current run; the reason is recorded in its history. */
export async function terminateChain(client: Client, chain: RunChain, reason: string): Promise<'terminated' | 'ended'> {
  try {
    await client.workflow
      .getHandle(chain.workflowId, undefined, { firstExecutionRunId: chain.firstRunId })
      .terminate(reason);
    return 'terminated';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || grpcCodeOf(err) === 5) return 'ended';
    throw err;
  }
}

/** How a run ended, as far as an operator needs it. */
export interface RunEnding {
  workflowId: string;
  runId: string;
  /** Temporal's status: CANCELLED, COMPLETED, TERMINATED, ... */
  status: string;
  stopReason?: string;
  /** The AgentResult (a cancelled run's partial one); none for a run Temporal ended (terminated, timed out, failed). */
  result?: AgentResult;
  /** Why there is no result. */
  failure?: string;
  /** The agent_effects memo, for runs without a result to list them. */
  effectCounts?: EffectCounts;
}

/** Waits up to `ms` for the chain to end (following continue-as-new); undefined if it still runs. */
export async function waitForEnd(client: Client, chain: RunChain, ms: number): Promise<RunEnding | undefined> {
  const deadline = Date.now() + ms;
  try {
    await withDeadline(client, ms, () => client.workflow.getHandle(chain.workflowId, chain.runId).result());
  } catch (err) {
    // gRPC reports the deadline as DEADLINE_EXCEEDED, or at times as CANCELLED.
    if (isDeadlineExceeded(err) || Date.now() >= deadline) return undefined;
    if (!(err instanceof WorkflowFailedError)) throw err;
  }
  const ending = await runEnding(client, chain.workflowId);
  return ending.status === 'RUNNING' ? undefined : ending;
}

/** How the workflow id's current run ended (or that it is RUNNING). */
export async function runEnding(client: Client, workflowId: string): Promise<RunEnding> {
  const description = await client.workflow.getHandle(workflowId).describe();
  const ending: RunEnding = {
    workflowId,
    runId: description.runId,
    status: description.status.name,
    stopReason: description.typedSearchAttributes.get(AGENT_STOP_REASON) ?? undefined,
    effectCounts: effectCountsOf(description.memo?.[EFFECTS_MEMO]),
  };
  if (ending.status === 'RUNNING') return ending;
  try {
    ending.result = await withDeadline(client, READ_TIMEOUT_MS, () =>
      runResult(client.workflow.getHandle(workflowId, description.runId)),
    );
    ending.stopReason = ending.result.stop_reason;
  } catch (err) {
    ending.failure = err instanceof WorkflowFailedError ? (err.cause?.message ?? err.message) : (err as Error).message;
  }
  return ending;
}

/** "CANCELLED (stop reason cancelled)". */
export function endingSummary(e: RunEnding): string {
  const effects = e.result?.effects ? undefined : e.effectCounts;
  return (
    `${e.status}${e.stopReason ? ` (stop reason ${e.stopReason})` : ''}` +
    (effects ? `; effects: ${formatEffectCounts(effects)}` : '')
  );
}

/** The lines `cancel` prints once a run has ended: status, usage, every effect. */
export function formatEnding(e: RunEnding): string[] {
  const lines = [`${e.workflowId} ended: ${endingSummary(e)}`];
  if (e.result) lines.push(`  usage:  ${formatUsage(e.result.usage)}`);
  else if (e.failure) lines.push(`  no result: ${e.failure.split('\n')[0]}`);
  lines.push(...formatEffects(e.result?.effects));
  return lines;
}

/** How a run ended, for -o json: snake_case, the result (a cancelled run's partial one) included. */
export function endingJson(e: RunEnding): Record<string, unknown> {
  return {
    workflow_id: e.workflowId,
    run_id: e.runId,
    status: e.status,
    stop_reason: e.stopReason ?? null,
    result: e.result ?? null,
    failure: e.failure ?? null,
    effect_counts: e.effectCounts ?? null,
  };
}

/** Whether the run ended because of the cancel. */
export function endedCancelled(e: RunEnding): boolean {
  return e.status === 'CANCELLED' || e.stopReason === 'cancelled';
}
