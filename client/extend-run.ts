// `agent extend`, for the CLI and the tests: send the `extend` Update to the run now running under
// a workflow id. Every refusal (the run ended, an amount out of bounds, a budget the run does not
// have, no readable reason) is an ExtendError with one line, and changes nothing in the run.
import type { Client } from '@temporalio/client';
import { updateRefusal } from './update-refusal';
import { AgentError } from './agent-error';
import type { ExtendReceipt, ExtendRequest } from '../common/cost/extend';
import { updateChain } from './chain-update';
import { extendUpdate } from '../common/agent-messages';

/** The run cannot take the top-up: it has ended, or its validator refused it. */
export class ExtendError extends AgentError {}

/**
 * Sends the top-up to the run now going on under `workflowId`, through its chain (`updateChain`): a
 * run continuing as new as it arrives passes it to the next, and a repeat whose answer was lost is
 * answered by whichever run of the chain granted it (top-ups carry their Update ids), never granted twice.
 */
export async function extendRun(client: Client, workflowId: string, request: ExtendRequest): Promise<ExtendReceipt> {
  return updateChain(
    client,
    workflowId,
    (handle, updateId) => handle.executeUpdate(extendUpdate, { args: [request], updateId }),
    {
      ended: (status) => new ExtendError(`run ${workflowId} has ended (${status}): a top-up cannot resume it`),
      replaced: () =>
        new ExtendError(`run ${workflowId} has ended: another run now goes on under its id; a top-up cannot resume it`),
      refused: (err) => new ExtendError(`run ${workflowId} refused the top-up: ${updateRefusal(err)}`),
    },
  );
}
