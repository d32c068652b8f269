// What an operator does with a run that waits for a person: see what is pending, approve or
// reject that exact call, answer an escalation. Shared by the CLI, the demo and the tests. Every
// refusal is an ApprovalError with a one-line message, and changes nothing in the run.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { reactAgent } from '../workflows/agent/agent';
import { updateRefusal } from './update-refusal';
import { AgentError } from './agent-error';
import type {
  ApprovalAnswer,
  ApprovalDecision,
  ApprovalReceipt,
  PendingApproval,
} from '../common/conversation/approvals';
import { existingRun, runState } from './agent-client';
import { approvalUpdate } from '../common/agent-messages';

/** The run cannot take the answer: it has ended, nothing awaits approval, or it refused it. */
export class ApprovalError extends AgentError {}

export interface ApprovalRequest {
  decision: ApprovalDecision;
  /** The pending call's id (`agent status` shows it). Without it, whatever is pending now. */
  id?: string;
  reason?: string;
  text?: string;
  operator?: string;
}

/** What the run waits for, or undefined. */
export async function pendingApproval(handle: WorkflowHandle): Promise<PendingApproval | undefined> {
  return (await runState(handle)).awaiting_approval;
}

/** The Update id of an answer. See answerApproval. */
export function approvalUpdateId(runId: string, callId: string, decision: ApprovalDecision): string {
  return `${runId}:${callId}:${decision}`;
}

/**
 * Sends the `approval` Update. The answer names the pending call's id, tool, argument hash and
 * amount as read from the run, so the workflow's validator rejects it if the run has moved on to
 * another call meanwhile. The update id is `<run id>:<call id>:<decision>`: a repeated answer is
 * deduplicated by Temporal and answered again by the workflow, changing nothing; the run id keeps
 * a run re-done by `temporal workflow reset` (a new run id, the same call ids) from being answered
 * with the pre-reset run's cached outcome.
 */
export async function answerApproval(
  client: Client,
  workflowId: string,
  req: ApprovalRequest,
): Promise<ApprovalReceipt> {
  const description = await (await existingRun(client, workflowId)).describe();
  if (description.status.name !== 'RUNNING') {
    throw new ApprovalError(`run ${workflowId} has ended (${description.status.name}): nothing awaits approval`);
  }
  // The run just read, by its id: the answer reaches that run or none (the update id names it).
  const handle = client.workflow.getHandle<typeof reactAgent>(workflowId, description.runId);

  const pending = req.id === undefined ? await pendingApproval(handle) : undefined;
  if (req.id === undefined && !pending) throw new ApprovalError(`nothing is awaiting approval in run ${workflowId}`);
  const answer: ApprovalAnswer = {
    id: req.id ?? pending!.id,
    decision: req.decision,
    // Bind the answer to what was read: the validator refuses it if the run has moved on.
    ...(pending?.tool !== undefined ? { tool: pending.tool } : {}),
    ...(pending?.args_hash !== undefined ? { args_hash: pending.args_hash } : {}),
    ...(pending?.amount_usd !== undefined ? { amount_usd: pending.amount_usd } : {}),
    ...(req.reason !== undefined ? { reason: req.reason } : {}),
    ...(req.text !== undefined ? { text: req.text } : {}),
    ...(req.operator !== undefined ? { operator: req.operator } : {}),
  };

  try {
    return await handle.executeUpdate(approvalUpdate, {
      args: [answer],
      updateId: approvalUpdateId(description.runId, answer.id, req.decision),
    });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      throw new ApprovalError(`run ${workflowId} refused the answer: ${updateRefusal(err)}`);
    }
    throw err;
  }
}
