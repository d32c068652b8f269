// An Update for whatever run of a chain is running now (`say`, `extend`): addressed to the chain (its
// first run's id), not to one run, under one Update id for every attempt. A run that is closing (it
// continues as new) refuses the Update, or aborts it, and the retry lands on the chain's next run;
// the workflow remembers the ids its chain applied (say's last messages, every top-up), so a repeat
// whose first answer was lost is answered, not applied again. Another chain later started under the
// same workflow id is another conversation or run: the Update never reaches it.
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { isClosingRunError } from '../runtime/closing-run-retry';
import { chainHandle, chainOf, describeExistingRun } from './agent-client';
import type { reactAgent } from '../workflows/agent/agent';

/** Attempts at the chain's current run: each retry follows a run that was closing into its successor. */
const CHAIN_ATTEMPTS = 8;

/** What the caller says, in one line each, when the Update cannot be applied. */
export interface ChainRefusals {
  /** The run under the id has ended (status as Temporal names it). */
  ended(status: string): Error;
  /** A retry found another chain under the id: the one addressed has ended. */
  replaced(): Error;
  /** The run's validator or handler refused the Update. */
  refused(err: WorkflowUpdateFailedError): Error;
}

export async function updateChain<R>(
  client: Client,
  workflowId: string,
  send: (handle: WorkflowHandle<typeof reactAgent>, updateId: string) => Promise<R>,
  refusals: ChainRefusals,
): Promise<R> {
  const updateId = randomUUID();
  let chain: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const description = await describeExistingRun(client, workflowId);
    if (description.status.name !== 'RUNNING') throw refusals.ended(description.status.name);
    if (attempt > 1 && chainOf(description) !== chain) throw refusals.replaced();
    chain = chainOf(description);
    // The chain just read: its current run takes the Update, or none of its runs does.
    try {
      return await send(chainHandle(client, description), updateId);
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) throw refusals.refused(err);
      if (!isClosingRunError(err) || attempt >= CHAIN_ATTEMPTS) throw err;
      // The next run starts as this one closes: a short, growing pause before reading the chain again.
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}
