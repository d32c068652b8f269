// The retail database of a suite run, as the runtime's retail store keeps it (one SQLite file for the
// eval's workers, keyed by workflow id): its state now, and how many writes it committed.
import type { RetailDB } from '../../domains/retail/db';

/** The file the eval's workers keep the runs' retail databases in (their AGENT_RETAIL_DB). */
export const RETAIL_DB_ENV = 'AGENT_RETAIL_DB';

export function runDb(file: string, workflowId: string): RetailDB {
  throw new Error(`the retail store is not wired yet (${file}, ${workflowId})`);
}

export function runAppliedWrites(file: string, workflowId: string): number {
  throw new Error(`the retail store is not wired yet (${file}, ${workflowId})`);
}
