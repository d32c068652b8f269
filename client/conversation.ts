// The customer's side of a conversation run: send a message (the `say` Update), read the turns the
// run has kept. Shared by `agent say`, `agent chat` and the tests. Every refusal is a SayError with
// one line, and changes nothing in the run.
import type { Client } from '@temporalio/client';
import type { SayReceipt, SayRequest } from '../common/conversation/conversation';
import { updateRefusal } from './update-refusal';
import { AgentError } from './agent-error';
import { updateChain } from './chain-update';
import { sayUpdate } from '../common/agent-messages';

/** The run did not take the message: it has ended, is no conversation, or refused it. */
export class SayError extends AgentError {}

/**
 * Sends the customer's message to the conversation now going on under `workflowId`, through its
 * chain (`updateChain`): applied once, whichever run takes it; never to another conversation later
 * started under the same id.
 */
export async function sayToRun(client: Client, workflowId: string, message: SayRequest): Promise<SayReceipt> {
  return updateChain(
    client,
    workflowId,
    (handle, updateId) => handle.executeUpdate(sayUpdate, { args: [message], updateId }),
    {
      ended: (status) => new SayError(`run ${workflowId} has ended (${status}): the conversation is over`),
      replaced: () =>
        new SayError(`run ${workflowId} has ended: the conversation is over (another one now runs under its id)`),
      refused: (err) => new SayError(`run ${workflowId} refused the message: ${updateRefusal(err)}`),
    },
  );
}
