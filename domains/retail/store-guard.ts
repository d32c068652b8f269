// A conversation's database lives in one store, and every worker of the fleet must use it. A
// replica started without the fleet's AGENT_RETAIL_DATABASE_URL (its SQLite default) would read the
// conversation as if the writes made elsewhere never happened, and write beside them. Nothing on
// the task queue tells such a worker apart, so the run carries the kind of store its first retail
// call reported (Observation.store) and a worker of another kind refuses the call, retryably: a
// retry may reach a worker of the fleet's kind. Two stores of one kind (two PostgreSQL databases,
// two SQLite files) are not told apart.
import type { Observation } from '../../common/tools/observation';
import type { ToolInput } from '../../common/types';
import type { RetailRecords } from './services';

/** The error type of a call refused because the worker's store is not of the run's kind. */
export const RETAIL_STORE_MISMATCH = 'RetailStoreMismatch';

/** Why `records` must not serve a call the run pinned to `expected`, or undefined when it may. */
export function storeMismatch(tool: string, expected: ToolInput['store'], records: RetailRecords): string | undefined {
  if (expected === undefined || expected === records.kind) return undefined;
  return (
    `${tool}: the conversation's earlier calls used a ${expected} retail store, this worker's is ${records.kind}; ` +
    'every worker must use the same store (AGENT_RETAIL_DATABASE_URL)'
  );
}

/** The observation, naming the kind of store it came from (the workflow pins the run's later calls to it). */
export function fromStore(records: RetailRecords, observation: Observation): Observation {
  return { ...observation, store: records.kind };
}
