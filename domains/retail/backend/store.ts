// The retail domain's system of record on SQLite, the embedded default (postgres.ts is the shared
// backend): each conversation's shop database, in one SQLite file (AGENT_RETAIL_DB) that every
// worker process of one host opens. A run's database starts as τ²-bench's initial one and changes
// only by its writes; each write is applied inside one immediate transaction together with its
// idempotency key, so a retry, a second worker or a resumed hung attempt finds the key and reports
// the first outcome instead of applying it again.
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type Database from 'better-sqlite3';
import type { RetailDB } from '../db';
import { snapshot } from '../db';
import { loadRetailDb } from '../initial-db';
import type { Apply, WriteOutcome, WriteRecord } from '../services';
import type { RetailStoreBackend, RetailWrite } from './store-backend';
import { databaseFromText, databaseToText } from './python-ints';
import { RunCache } from './run-cache';
import type { VersionedDb } from './run-cache';

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

/**
 * The SQLite backend. Its calls are synchronous underneath (better-sqlite3); they answer as
 * promises so the retail tools treat every backend alike.
 */
export class RetailStore implements RetailStoreBackend {
  readonly kind = 'sqlite';
  private readonly cache = new RunCache();
  /** The initial database, parsed once: every run that has not written reads it (never changed in place). */
  private initial: RetailDB | undefined;

  private constructor(
    private readonly sql: Database.Database,
    readonly describe: string,
  ) {}

  static open(file: string): RetailStore {
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, not at import
    const sql = new (require('better-sqlite3') as typeof Database)(file);
    sql.pragma('busy_timeout = 5000'); // before WAL: several workers open the file at once
    sql.pragma('journal_mode = WAL');
    sql.pragma('synchronous = FULL');
    sql.exec(SCHEMA);
    return new RetailStore(sql, `sqlite ${file}`);
  }

  async close(): Promise<void> {
    this.sql.close();
  }

  async database(runKey: string): Promise<RetailDB> {
    return snapshot(this.current(runKey).db);
  }

  async read<T>(runKey: string, fn: (db: RetailDB) => T): Promise<T> {
    return fn(this.current(runKey).db);
  }

  /**
   * Applies a write once per key: the lookup by key, the change and the key's record commit
   * together or not at all. A tool that refuses may have changed the database already (the
   * reference keeps such changes), so its database is stored as well.
   */
  async write(runKey: string, key: string, tool: string, apply: Apply): Promise<WriteOutcome> {
    const run = this.sql.transaction((): WriteOutcome => {
      const known = this.lookup(key);
      if (known) return { record: known, reconciled: true };
      const { version, db } = this.current(runKey);
      // The run's own cached copy changes in place (a write that does not commit forgets it, below):
      // a copy of a few MB per write was a third of its cost. The initial database is every new run's.
      const working = version === 0 ? snapshot(db) : db;
      const done = apply(working);
      const record: WriteRecord = done.ok
        ? { state: 'applied', result: done.result }
        : { state: 'refused', error: done.error };
      this.store(runKey, version + 1, working);
      this.insertWrite(key, runKey, tool, record);
      return { record, reconciled: false };
    });
    try {
      return run.immediate();
    } catch (err) {
      this.cache.forget(runKey);
      throw err;
    }
  }

  /** The record of a key; with `settle`, a key nobody recorded is recorded as not made (a later attempt then refuses). */
  async reconcile(key: string, runKey: string, tool: string, settle: boolean): Promise<WriteRecord | undefined> {
    return this.sql
      .transaction((): WriteRecord | undefined => {
        const known = this.lookup(key);
        if (known || !settle) return known;
        const record: WriteRecord = { state: 'not_made' };
        this.insertWrite(key, runKey, tool, record);
        return record;
      })
      .immediate();
  }

  async conversationOf(run: string): Promise<string> {
    if (run.includes('/')) return run;
    const row = this.sql
      .prepare(
        `SELECT run_key FROM retail_runs WHERE run_key = ? OR substr(run_key, 1, length(?) + 1) = ? || '/'
         ORDER BY updated_at DESC, rowid DESC LIMIT 1`,
      )
      .get(run, run, run) as { run_key: string } | undefined;
    return row?.run_key ?? run;
  }

  async writesOf(runKey: string): Promise<RetailWrite[]> {
    return this.sql
      .prepare('SELECT idempotency_key AS key, tool, state FROM retail_writes WHERE run_key = ? ORDER BY rowid')
      .all(runKey) as RetailWrite[];
  }

  private lookup(key: string): WriteRecord | undefined {
    const row = this.sql.prepare('SELECT record FROM retail_writes WHERE idempotency_key = ?').get(key) as
      { record: string } | undefined;
    return row ? (JSON.parse(row.record) as WriteRecord) : undefined;
  }

  private insertWrite(key: string, runKey: string, tool: string, record: WriteRecord): void {
    this.sql
      .prepare('INSERT INTO retail_writes VALUES (?, ?, ?, ?, ?, ?)')
      .run(key, runKey, tool, record.state, JSON.stringify(record), new Date().toISOString());
  }

  private current(runKey: string): VersionedDb {
    const row = this.sql.prepare('SELECT version FROM retail_runs WHERE run_key = ?').get(runKey) as
      { version: number } | undefined;
    if (!row) return { version: 0, db: (this.initial ??= loadRetailDb()) };
    const cached = this.cache.at(runKey, row.version);
    if (cached) return cached;
    const stored = this.sql.prepare('SELECT db FROM retail_runs WHERE run_key = ?').get(runKey) as { db: string };
    const entry = { version: row.version, db: databaseFromText(stored.db) };
    this.cache.remember(runKey, entry);
    return entry;
  }

  private store(runKey: string, version: number, db: RetailDB): void {
    this.sql
      .prepare(
        'INSERT INTO retail_runs VALUES (?, ?, ?, ?) ON CONFLICT(run_key) DO UPDATE SET version = excluded.version, db = excluded.db, updated_at = excluded.updated_at',
      )
      .run(runKey, version, databaseToText(db), new Date().toISOString());
    this.cache.remember(runKey, { version, db });
  }
}
