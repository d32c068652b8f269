// The retail database of a suite run, as the runtime's retail store keeps it (one SQLite file for the
// eval's workers, keyed by workflow id): its state now, and how many writes it applied.
import { RetailStore } from '../../activities/retail/store';
import type { RetailDB } from '../../domains/retail/db';

/** The file the eval's workers keep the runs' retail databases in (their AGENT_RETAIL_DB). */
export const RETAIL_DB_ENV = 'AGENT_RETAIL_DB';

/** The run's database and the writes the store applied to it (each idempotency key once; refusals apart). */
export function runEndState(file: string, workflowId: string): { db: RetailDB; applied: number } {
  const store = RetailStore.open(file);
  try {
    return {
      db: store.database(workflowId),
      applied: store.writesOf(workflowId).filter((w) => w.state === 'applied').length,
    };
  } finally {
    store.close();
  }
}
