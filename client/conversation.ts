// The customer's side of a conversation run: send a message (the `say` Update), read the turns the
// run has kept. Shared by `agent say`, `agent chat` and the tests. Every refusal is a SayError with
// one line, and changes nothing in the run.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { reactAgent } from '../workflows/agent';
import { sayUpdate } from '../common/conversation';
import type { SayReceipt, SayRequest } from '../common/conversation';
import { updateRefusal } from './update-refusal';
import { AgentError } from './agent-error';
import { existingRun } from './agent-client';

/** The run did not take the message: it has ended, is no conversation, or refused it. */
export class SayError extends AgentError {}

/** Sends the customer's message to the run now going on under `workflowId`. */
export async function sayToRun(client: Client, workflowId: string, message: SayRequest): Promise<SayReceipt> {
  const description = await (await existingRun(client, workflowId)).describe();
  if (description.status.name !== 'RUNNING')
    throw new SayError(`run ${workflowId} has ended (${description.status.name}): the conversation is over`);
  // The run just read, by its id: the message reaches that run or none.
  const handle = client.workflow.getHandle<typeof reactAgent>(workflowId, description.runId);
  try {
    return await handle.executeUpdate(sayUpdate, { args: [message] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      throw new SayError(`run ${workflowId} refused the message: ${updateRefusal(err)}`);
    }
    throw err;
  }
}
