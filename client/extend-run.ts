// `agent extend`, for the CLI and the tests: send the `extend` Update to the run now running under
// a workflow id. Every refusal (the run ended, an amount out of bounds, a budget the run does not
// have, no readable reason) is an ExtendError with one line, and changes nothing in the run.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { updateRefusal } from './update-refusal';
import { AgentError } from './agent-error';
import type { ExtendReceipt, ExtendRequest } from '../common/cost/extend';
import { chainOf, describeExistingRun } from './agent-client';
import { isClosingRunError } from './closing-run-retry';
import type { reactAgent } from '../workflows/agent/agent';
import { extendUpdate } from '../common/agent-messages';

/** The run cannot take the top-up: it has ended, or its validator refused it. */
export class ExtendError extends AgentError {}

export async function extendRun(client: Client, workflowId: string, request: ExtendRequest): Promise<ExtendReceipt> {
  const description = await describeExistingRun(client, workflowId);
  if (description.status.name !== 'RUNNING')
    throw new ExtendError(`run ${workflowId} has ended (${description.status.name}): a top-up cannot resume it`);
  // Pinned to the run just read, not to its chain: a run does not remember the top-ups its
  // predecessor granted, so a retry whose first answer was lost must reach the run that granted it
  // (which answers with that outcome), never the next one (which would grant it again).
  const handle = client.workflow.getHandle<typeof reactAgent>(workflowId, description.runId);
  try {
    return await handle.executeUpdate(extendUpdate, { args: [request] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      throw new ExtendError(`run ${workflowId} refused the top-up: ${updateRefusal(err)}`);
    }
    if (!isClosingRunError(err)) throw err;
    // The run closed before it took the top-up: nothing was granted. Say why, in one line.
    const now = await describeExistingRun(client, workflowId).catch(() => undefined);
    if (now?.status.name === 'RUNNING' && chainOf(now) === chainOf(description))
      throw new ExtendError(
        `run ${workflowId} continued as new as the top-up arrived: nothing was granted; send it again`,
      );
    if (now?.status.name === 'RUNNING')
      throw new ExtendError(
        `run ${workflowId} has ended: another run now goes on under its id; a top-up cannot resume it`,
      );
    throw new ExtendError(`run ${workflowId} has ended (${now?.status.name ?? 'gone'}): a top-up cannot resume it`);
  }
}
