// The retail database of a suite run, as the runtime's retail store keeps it (one SQLite file for the
// eval's workers, a database per conversation): its state now, and how many writes it applied.
import { withRetailStore } from '../../domains/retail/backend/open';
import type { RetailDB } from '../../domains/retail/db';

/** The file the eval's workers keep the runs' retail databases in (their AGENT_RETAIL_DB). */
export const RETAIL_DB_ENV = 'AGENT_RETAIL_DB';

/** The run's database and the writes the store applied to it (each idempotency key once; refusals apart). */
export function runEndState(file: string, workflowId: string): Promise<{ db: RetailDB; applied: number }> {
  return withRetailStore(file, async (store) => {
    // The run's conversation (the store keys each by `<workflow id>/<first run id>`).
    const conversation = await store.conversationOf(workflowId);
    return {
      db: await store.database(conversation),
      applied: (await store.writesOf(conversation)).filter((w) => w.state === 'applied').length,
    };
  });
}
