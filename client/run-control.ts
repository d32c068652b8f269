// The kill switch and the wait for a run's end, without the rest of agent-client.ts (run input
// checks, every domain's tools, zod): `agent cancel` loads only these, and a cancel is timed from
// the moment the operator types it, CLI start included.
import { randomUUID } from 'node:crypto';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { reactAgent } from '../workflows/agent/agent';
import type { AgentResult } from '../common/types';
import { CANCELLED_RESULT_MEMO } from '../common/types';
import { EMPTY_USAGE } from '../common/cost/budget';
import { checkRunId, RunNotFoundError } from './run-id';

/** Waits for the run to end; a cancelled run yields its partial result with stop_reason "cancelled". */
export async function runResult(handle: WorkflowHandle<typeof reactAgent>): Promise<AgentResult> {
  try {
    return await handle.result();
  } catch (err) {
    if (err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure) {
      const description = await handle.describe();
      const memo = description.memo?.[CANCELLED_RESULT_MEMO] as AgentResult | undefined;
      if (memo) return memo;
      // Cancelled before the workflow could write its memo (e.g. before its first task ran).
      return emptyCancelledResult();
    }
    throw err;
  }
}

function emptyCancelledResult(): AgentResult {
  return {
    status: 'stopped',
    stop_reason: 'cancelled',
    trace: [],
    history: [],
    usage: { ...EMPTY_USAGE },
    budget: { max_steps: 0, max_tool_calls: 0, max_seconds: 0, max_tokens: 0, max_usd: 0 },
  };
}

/**
 * The kill switch. The reason is recorded in the run's history (WorkflowExecutionCancelRequested).
 * It reaches the current run of the workflow id; with `firstExecutionRunId`, only while that run
 * belongs to the chain that started with it (never a newer run that reuses the id).
 */
export async function cancelRun(
  client: Client,
  workflowId: string,
  reason = 'cancelled by operator',
  firstExecutionRunId?: string,
): Promise<void> {
  checkRunId(workflowId);
  try {
    await client.workflowService.requestCancelWorkflowExecution({
      namespace: client.options.namespace,
      workflowExecution: { workflowId },
      ...(firstExecutionRunId ? { firstExecutionRunId } : {}),
      reason,
      identity: client.options.identity,
      requestId: randomUUID(),
    });
  } catch (err) {
    if ((err as { code?: number }).code === 5) throw new RunNotFoundError(workflowId); // gRPC NOT_FOUND
    throw err;
  }
}
