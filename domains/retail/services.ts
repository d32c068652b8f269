// What the retail tools need from the worker: the system of record of each conversation's shop
// database (domains/retail/backend/: SQLite, or PostgreSQL when configured). Types only: the domain
// never opens a file or a connection.
import type { RetailDB } from './db';

/** What a write did, as recorded under its key: applied (with the tool's result) or refused (its error). */
export type WriteRecord =
  | { state: 'applied'; result: unknown }
  | { state: 'refused'; error: string }
  /** Settled by the run's reconcile lookup: the write never happened and now never will. */
  | { state: 'not_made' };

export interface WriteOutcome {
  record: WriteRecord;
  /** The key was already recorded: an earlier attempt (or another worker) decided it. */
  reconciled: boolean;
}

/** A write on a working copy: the tool's result, or its refusal (the error the model sees). */
export type Apply = (db: RetailDB) => { ok: true; result: unknown } | { ok: false; error: string };

/** Where a store keeps the conversations' databases; a conversation's calls all go to one kind. */
export type RetailStoreKind = 'sqlite' | 'postgresql';

export interface RetailRecords {
  readonly kind: RetailStoreKind;
  /** Runs a read on the run's database (`fn` must not change it: the reference's reads return copies). */
  read<T>(runKey: string, fn: (db: RetailDB) => T): Promise<T>;
  /** Applies a write once per idempotency key (atomically with the key's record). */
  write(runKey: string, key: string, tool: string, apply: Apply): Promise<WriteOutcome>;
  /** The record of a key; with `settle`, an unrecorded key is recorded as not made. */
  reconcile(key: string, runKey: string, tool: string, settle: boolean): Promise<WriteRecord | undefined>;
}

export interface RetailServices {
  records(): RetailRecords;
}
