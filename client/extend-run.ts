// `agent extend`, for the CLI and the tests: send the `extend` Update to the run now running under
// a workflow id. Every refusal (the run ended, an amount out of bounds, a budget the run does not
// have, no readable reason) is an ExtendError with one line, and changes nothing in the run.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { updateRefusal } from './update-refusal';
import { AgentError } from './agent-error';
import type { ExtendReceipt, ExtendRequest } from '../common/cost/extend';
import { chainHandle, describeExistingRun } from './agent-client';
import { extendUpdate } from '../common/agent-messages';

/** The run cannot take the top-up: it has ended, or its validator refused it. */
export class ExtendError extends AgentError {}

export async function extendRun(client: Client, workflowId: string, request: ExtendRequest): Promise<ExtendReceipt> {
  const description = await describeExistingRun(client, workflowId);
  if (description.status.name !== 'RUNNING')
    throw new ExtendError(`run ${workflowId} has ended (${description.status.name}): a top-up cannot resume it`);
  // The chain just read: its current run takes the top-up (a run continuing as new hands it on).
  const handle = chainHandle(client, description);
  try {
    return await handle.executeUpdate(extendUpdate, { args: [request] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      throw new ExtendError(`run ${workflowId} refused the top-up: ${updateRefusal(err)}`);
    }
    throw err;
  }
}
