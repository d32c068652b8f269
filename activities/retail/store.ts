// The retail domain's system of record: each conversation's shop database, in one SQLite file
// (AGENT_RETAIL_DB) that every worker process of the fleet opens. A run's database starts as
// τ²-bench's initial one and changes only by its writes; each write is applied inside one
// immediate transaction together with its idempotency key, so a retry, a second worker or a
// resumed hung attempt finds the key and reports the first outcome instead of applying it again.
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type Database from 'better-sqlite3';
import type { RetailDB } from '../../domains/retail/db';
import { snapshot } from '../../domains/retail/db';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { PythonInt } from '../../domains/retail/python/int';
import type { Apply, RetailRecords, WriteOutcome, WriteRecord } from '../../domains/retail/services';
import { readEnv } from '../../runtime/env-vars';

const CACHED_RUNS = 16;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS retail_runs (
  run_key    TEXT    PRIMARY KEY,
  version    INTEGER NOT NULL,
  db         TEXT    NOT NULL,
  updated_at TEXT    NOT NULL
);
CREATE TABLE IF NOT EXISTS retail_writes (
  idempotency_key TEXT PRIMARY KEY,
  run_key         TEXT NOT NULL,
  tool            TEXT NOT NULL,
  state           TEXT NOT NULL,
  record          TEXT NOT NULL,
  created_at      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS retail_writes_by_run ON retail_writes (run_key);
`;

export class RetailStore implements RetailRecords {
  /** The last database read or written per run, by version: a read does not parse 2 MB again. */
  private readonly cache = new Map<string, { version: number; db: RetailDB }>();
  /** The initial database, parsed once: every run that has not written reads it (never changed in place). */
  private initial: RetailDB | undefined;

  private constructor(private readonly sql: Database.Database) {}

  static open(file: string): RetailStore {
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, not at import
    const sql = new (require('better-sqlite3') as typeof Database)(file);
    sql.pragma('busy_timeout = 5000'); // before WAL: several workers open the file at once
    sql.pragma('journal_mode = WAL');
    sql.pragma('synchronous = FULL');
    sql.exec(SCHEMA);
    return new RetailStore(sql);
  }

  close(): void {
    this.sql.close();
  }

  /** The run's database now, a copy (the initial database when the run never wrote). */
  database(runKey: string): RetailDB {
    return snapshot(this.current(runKey).db);
  }

  /** Runs a read on the run's database (the reference's reads change nothing and return copies). */
  read<T>(runKey: string, fn: (db: RetailDB) => T): T {
    return fn(this.current(runKey).db);
  }

  /**
   * Applies a write once per key: the lookup by key, the change and the key's record commit
   * together or not at all. A tool that refuses may have changed the database already (the
   * reference keeps such changes), so its database is stored as well.
   */
  write(runKey: string, key: string, tool: string, apply: Apply): WriteOutcome {
    const run = this.sql.transaction((): WriteOutcome => {
      const known = this.lookup(key);
      if (known) return { record: known, reconciled: true };
      const { version, db } = this.current(runKey);
      const working = snapshot(db);
      const done = apply(working);
      const record: WriteRecord = done.ok
        ? { state: 'applied', result: done.result }
        : { state: 'refused', error: done.error };
      this.store(runKey, version + 1, working);
      this.sql
        .prepare('INSERT INTO retail_writes VALUES (?, ?, ?, ?, ?, ?)')
        .run(key, runKey, tool, record.state, JSON.stringify(record), new Date().toISOString());
      return { record, reconciled: false };
    });
    try {
      return run.immediate();
    } catch (err) {
      this.cache.delete(runKey); // the transaction rolled back: the cached copy may be ahead
      throw err;
    }
  }

  /** The record of a key; with `settle`, a key nobody recorded is recorded as not made (a later attempt then refuses). */
  reconcile(key: string, runKey: string, tool: string, settle: boolean): WriteRecord | undefined {
    return this.sql
      .transaction((): WriteRecord | undefined => {
        const known = this.lookup(key);
        if (known || !settle) return known;
        const record: WriteRecord = { state: 'not_made' };
        this.sql
          .prepare('INSERT INTO retail_writes VALUES (?, ?, ?, ?, ?, ?)')
          .run(key, runKey, tool, record.state, JSON.stringify(record), new Date().toISOString());
        return record;
      })
      .immediate();
  }

  /** Writes applied to the run's database (a refused write may have changed it too; it is counted apart). */
  writesOf(runKey: string): Array<{ key: string; tool: string; state: WriteRecord['state'] }> {
    return this.sql
      .prepare('SELECT idempotency_key AS key, tool, state FROM retail_writes WHERE run_key = ? ORDER BY rowid')
      .all(runKey) as Array<{ key: string; tool: string; state: WriteRecord['state'] }>;
  }

  private lookup(key: string): WriteRecord | undefined {
    const row = this.sql.prepare('SELECT record FROM retail_writes WHERE idempotency_key = ?').get(key) as
      { record: string } | undefined;
    return row ? (JSON.parse(row.record) as WriteRecord) : undefined;
  }

  private current(runKey: string): { version: number; db: RetailDB } {
    const row = this.sql.prepare('SELECT version FROM retail_runs WHERE run_key = ?').get(runKey) as
      { version: number } | undefined;
    if (!row) return { version: 0, db: (this.initial ??= loadRetailDb()) };
    const cached = this.cache.get(runKey);
    if (cached?.version === row.version) return cached;
    const stored = this.sql.prepare('SELECT db FROM retail_runs WHERE run_key = ?').get(runKey) as { db: string };
    const entry = { version: row.version, db: JSON.parse(stored.db, revivePythonInts) as RetailDB };
    this.remember(runKey, entry);
    return entry;
  }

  /** Keeps the latest few conversations' databases parsed (each is about 2 MB in memory). */
  private remember(runKey: string, entry: { version: number; db: RetailDB }): void {
    this.cache.delete(runKey);
    this.cache.set(runKey, entry);
    if (this.cache.size > CACHED_RUNS) this.cache.delete(this.cache.keys().next().value!);
  }

  private store(runKey: string, version: number, db: RetailDB): void {
    this.sql
      .prepare(
        'INSERT INTO retail_runs VALUES (?, ?, ?, ?) ON CONFLICT(run_key) DO UPDATE SET version = excluded.version, db = excluded.db, updated_at = excluded.updated_at',
      )
      .run(runKey, version, JSON.stringify(db, keepPythonInts), new Date().toISOString());
    this.remember(runKey, { version, db });
  }
}

// A Python int in a float field (PythonInt) hashes differently from the float: it survives storage.
const INT_MARK = '__python_int__';
function keepPythonInts(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key];
  return original instanceof PythonInt ? { [INT_MARK]: original.value } : value;
}
function revivePythonInts(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && INT_MARK in value)
    return new PythonInt((value as Record<string, number>)[INT_MARK]!);
  return value;
}

export function retailDbPathFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return readEnv('AGENT_RETAIL_DB', env);
}

/** The store of the file AGENT_RETAIL_DB names, opened on first use (a worker that never serves retail never opens it). */
export function lazyRetailStore(file: () => string = () => retailDbPathFromEnv()): () => RetailStore {
  let store: RetailStore | undefined;
  return () => (store ??= RetailStore.open(file()));
}

/** The run's database in `file` now (the eval's end state); the initial database when the run never wrote. */
export function readRetailDb(file: string, workflowId: string): RetailDB {
  const store = RetailStore.open(file);
  try {
    return store.database(workflowId);
  } finally {
    store.close();
  }
}

/** Writes the run committed (applied or refused, each key once). */
export function countAppliedWrites(file: string, workflowId: string): number {
  const store = RetailStore.open(file);
  try {
    return store.writesOf(workflowId).filter((w) => w.state !== 'not_made').length;
  } finally {
    store.close();
  }
}
