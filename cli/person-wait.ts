// Whether a running run is rightly waiting for a person (an approval, the customer's next message,
// an operator's top-up): `cancel --stuck` leaves such runs alone unless asked. The run itself
// says so through its `state` query; a run that cannot answer within QUERY_TIMEOUT_MS (no worker,
// a workflow task that keeps failing) is not known to be waiting, so it counts as stuck.
import type { Client } from '@temporalio/client';
import { runState } from '../client/agent-client';
import type { RunChain } from '../client/run-chain';
import type { AgentState } from '../common/types';
import { withDeadline } from './cli-context';

/** A live worker answers a query in milliseconds; a stuck run never does. */
export const QUERY_TIMEOUT_MS = 5_000;

const PERSON_PHASES: ReadonlySet<AgentState['phase']> = new Set([
  'awaiting_approval',
  'awaiting_customer',
  'awaiting_topup',
]);

/** What the run waits for in words, when it waits for a person; undefined otherwise. */
export function personAwaited(state: AgentState): string | undefined {
  if (!PERSON_PHASES.has(state.phase)) return undefined;
  return state.waiting_for ?? state.phase;
}

/** Asks the chain's current run; undefined when it does not wait for a person or does not answer in time. */
export async function awaitsPerson(client: Client, chain: RunChain): Promise<string | undefined> {
  try {
    // The chain's current run, not a pinned run id: a chain that continued as new answers from its newest run.
    const state = await withDeadline(client, QUERY_TIMEOUT_MS, () =>
      runState(client.workflow.getHandle(chain.workflowId)),
    );
    return personAwaited(state);
  } catch {
    return undefined;
  }
}
