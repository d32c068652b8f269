// The retail database of a suite run, as the runtime's retail store keeps it (one SQLite file for the
// eval's workers, a database per conversation): its state now, and how many writes it applied.
import { withRetailStore } from '../../domains/retail/backend/open';
import type { RetailDB } from '../../domains/retail/db';

/** The file the eval's workers keep the runs' retail databases in (their AGENT_RETAIL_DB). */
export const RETAIL_DB_ENV = 'AGENT_RETAIL_DB';

/**
 * What `use` reads from the run's database, and the writes the store applied to it (each idempotency
 * key once; refusals apart). `use` gets the store's own copy, not one made for it (a database is a
 * few MB and the suite reads one per run): it must not keep or change it.
 */
export function runEndState<T>(
  file: string,
  workflowId: string,
  use: (db: RetailDB) => T,
): Promise<{ read: T; applied: number }> {
  return withRetailStore(file, async (store) => {
    // The run's conversation (the store keys each by `<workflow id>/<first run id>`).
    const conversation = await store.conversationOf(workflowId);
    return {
      read: await store.read(conversation, use),
      applied: (await store.writesOf(conversation)).filter((w) => w.state === 'applied').length,
    };
  });
}
