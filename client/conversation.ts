// The customer's side of a conversation run: send a message (the `say` Update), read the turns the
// run has kept. Shared by `agent say`, `agent chat` and the tests. Every refusal is a SayError with
// one line, and changes nothing in the run.
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { SayReceipt, SayRequest } from '../common/conversation/conversation';
import { updateRefusal } from './update-refusal';
import { isClosingRunError } from './closing-run-retry';
import { AgentError } from './agent-error';
import { chainHandle, chainOf, describeExistingRun } from './agent-client';
import { sayUpdate } from '../common/agent-messages';

/** The run did not take the message: it has ended, is no conversation, or refused it. */
export class SayError extends AgentError {}

/** Attempts at the chain's current run: each retry follows a run that was closing into its successor. */
const SAY_ATTEMPTS = 8;

/**
 * Sends the customer's message to the conversation now going on under `workflowId`. It is addressed
 * to the conversation's chain (its first run's id), not to one run: a run that is closing (it
 * continues as new) refuses the Update, or aborts it, and the retry lands on the chain's next run,
 * under the same Update id, so a run that did apply it answers it as a duplicate (the chain
 * remembers the ids it applied): applied once, whichever run takes it. Another conversation later
 * started under the same workflow id is another chain: the message never reaches it.
 */
export async function sayToRun(client: Client, workflowId: string, message: SayRequest): Promise<SayReceipt> {
  const updateId = randomUUID();
  let chain: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const description = await describeExistingRun(client, workflowId);
    if (description.status.name !== 'RUNNING')
      throw new SayError(`run ${workflowId} has ended (${description.status.name}): the conversation is over`);
    // A retry that finds another chain under the id: that is another conversation, not this one.
    if (attempt > 1 && chainOf(description) !== chain)
      throw new SayError(`run ${workflowId} has ended: the conversation is over (another one now runs under its id)`);
    chain = chainOf(description);
    // The chain just read: its current run takes the message, or none of its runs does.
    const handle = chainHandle(client, description);
    try {
      return await handle.executeUpdate(sayUpdate, { args: [message], updateId });
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        throw new SayError(`run ${workflowId} refused the message: ${updateRefusal(err)}`);
      }
      if (!isClosingRunError(err) || attempt >= SAY_ATTEMPTS) throw err;
      // The next run starts as this one closes: a short, growing pause before reading the chain again.
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}
