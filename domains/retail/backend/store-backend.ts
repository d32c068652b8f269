// What every retail store offers beyond the tools' RetailRecords: the end state of a conversation
// (the eval, tests, operators) and closing. Implemented by the SQLite store (store.ts, the embedded
// default) and the PostgreSQL one (postgres.ts, shared by workers on any host).
import type { RetailDB } from '../db';
import type { RetailRecords, WriteRecord } from '../services';

export interface RetailWrite {
  key: string;
  tool: string;
  state: WriteRecord['state'];
}

export interface RetailStoreBackend extends RetailRecords {
  /** Where the store is, for messages (never a password). */
  readonly describe: string;
  /** The run's database now, a copy (the initial database when the run never wrote). */
  database(runKey: string): Promise<RetailDB>;
  /** A state key as given, or for a workflow id its latest conversation that wrote (the id itself if none did). */
  conversationOf(run: string): Promise<string>;
  /** The keys recorded for the run, in commit order (a refused write may have changed the database too). */
  writesOf(runKey: string): Promise<RetailWrite[]>;
  close(): Promise<void>;
}
