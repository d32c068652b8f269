// The retail store on PostgreSQL: each conversation's shop database in one database shared by every
// worker process, on any host, with the same rules as the SQLite store (store.ts). A run's database
// is JSON text with a version (text, not JSONB: JSONB reorders object keys, and the tools' results
// follow the reference's dict order); a write's idempotency key is unique in its table. A write runs in one
// transaction that holds its key's lock (a write and the run's settle of one key take turns) and
// then its run's (two workers writing one conversation take turns, each on the other's result).
import type { Pool, PoolClient } from 'pg';
import type { RetailDB } from '../db';
import { snapshot } from '../db';
import { loadRetailDb } from '../initial-db';
import type { Apply, WriteOutcome, WriteRecord } from '../services';
import { checkPostgresUrl } from '../../../runtime/postgres-url';
import { inTransaction, openPostgresPool, schemaOnce } from '../../../runtime/postgres-pool';
import type { RetailStoreBackend, RetailWrite } from './store-backend';
import { databaseFromText, databaseToText } from './python-ints';
import { RunCache } from './run-cache';
import type { VersionedDb } from './run-cache';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS retail_runs (
  run_key    TEXT        PRIMARY KEY,
  version    INTEGER     NOT NULL,
  db         TEXT        NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS retail_writes (
  id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  idempotency_key TEXT        NOT NULL UNIQUE,
  run_key         TEXT        NOT NULL,
  tool            TEXT        NOT NULL,
  state           TEXT        NOT NULL CHECK (state IN ('applied', 'refused', 'not_made')),
  record          TEXT        NOT NULL,
  created_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS retail_writes_by_run ON retail_writes (run_key);
`;

/** Advisory lock names: creating the schema; one lock per idempotency key; one per conversation. */
const SCHEMA_LOCK = 'agent.retail.schema';
const KEY_LOCK = 'agent.retail.key:';
const RUN_LOCK = 'agent.retail.run:';

type Queryable = Pick<PoolClient, 'query'>;

export class PostgresRetailStore implements RetailStoreBackend {
  readonly kind = 'postgresql';
  private readonly cache = new RunCache();
  private initial: RetailDB | undefined;
  private readonly ready: () => Promise<void>;

  private constructor(
    private readonly pool: Pool,
    readonly describe: string,
  ) {
    this.ready = schemaOnce(pool, SCHEMA_LOCK, SCHEMA);
  }

  /** A pool of a few connections to `url`; nothing connects until the first call, which creates the tables if missing. */
  static open(url: string, opts: { maxConnections?: number } = {}): PostgresRetailStore {
    const target = checkPostgresUrl(url, 'AGENT_RETAIL_DATABASE_URL');
    return new PostgresRetailStore(
      openPostgresPool(url, opts.maxConnections),
      `postgresql ${target.host}/${target.database}`,
    );
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  async database(runKey: string): Promise<RetailDB> {
    await this.ready();
    return snapshot((await this.current(this.pool, runKey)).db);
  }

  async read<T>(runKey: string, fn: (db: RetailDB) => T): Promise<T> {
    await this.ready();
    return fn((await this.current(this.pool, runKey)).db);
  }

  /**
   * Applies a write once per key: the lookup by key, the change and the key's record commit
   * together or not at all; a refusal's changes are stored too (the reference keeps them).
   */
  async write(runKey: string, key: string, tool: string, apply: Apply): Promise<WriteOutcome> {
    await this.ready();
    let written: VersionedDb | undefined;
    const outcome = await inTransaction(this.pool, async (c): Promise<WriteOutcome> => {
      await lock(c, KEY_LOCK + key);
      const known = await lookup(c, key);
      if (known) return { record: known, reconciled: true };
      await lock(c, RUN_LOCK + runKey);
      const { version, db } = await this.current(c, runKey);
      const working = snapshot(db);
      const done = apply(working);
      const record: WriteRecord = done.ok
        ? { state: 'applied', result: done.result }
        : { state: 'refused', error: done.error };
      await c.query(
        `INSERT INTO retail_runs (run_key, version, db, updated_at) VALUES ($1, $2, $3, clock_timestamp())
         ON CONFLICT (run_key) DO UPDATE SET version = excluded.version, db = excluded.db, updated_at = excluded.updated_at`,
        [runKey, version + 1, databaseToText(working)],
      );
      await insertWrite(c, key, runKey, tool, record);
      written = { version: version + 1, db: working };
      return { record, reconciled: false };
    });
    // Only once committed: a rolled-back write must not leave its copy in the cache.
    if (written) this.cache.remember(runKey, written);
    return outcome;
  }

  async reconcile(key: string, runKey: string, tool: string, settle: boolean): Promise<WriteRecord | undefined> {
    await this.ready();
    if (!settle) return lookup(this.pool, key);
    return inTransaction(this.pool, async (c) => {
      await lock(c, KEY_LOCK + key);
      const known = await lookup(c, key);
      if (known) return known;
      const record: WriteRecord = { state: 'not_made' };
      await insertWrite(c, key, runKey, tool, record);
      return record;
    });
  }

  async conversationOf(run: string): Promise<string> {
    if (run.includes('/')) return run;
    await this.ready();
    const { rows } = await this.pool.query<{ run_key: string }>(
      `SELECT run_key FROM retail_runs WHERE run_key = $1 OR starts_with(run_key, $1 || '/')
       ORDER BY updated_at DESC LIMIT 1`,
      [run],
    );
    return rows[0]?.run_key ?? run;
  }

  async writesOf(runKey: string): Promise<RetailWrite[]> {
    await this.ready();
    const { rows } = await this.pool.query<RetailWrite>(
      'SELECT idempotency_key AS key, tool, state FROM retail_writes WHERE run_key = $1 ORDER BY id',
      [runKey],
    );
    return rows;
  }

  /** The run's database as committed (inside a write: as of its run lock), parsed only when its version is new here. */
  private async current(q: Queryable, runKey: string): Promise<VersionedDb> {
    const { rows } = await q.query<{ version: number }>('SELECT version FROM retail_runs WHERE run_key = $1', [runKey]);
    if (!rows[0]) return { version: 0, db: (this.initial ??= loadRetailDb()) };
    const cached = this.cache.at(runKey, rows[0].version);
    if (cached) return cached;
    const stored = await q.query<{ version: number; db: string }>(
      'SELECT version, db FROM retail_runs WHERE run_key = $1',
      [runKey],
    );
    const entry = { version: stored.rows[0]!.version, db: databaseFromText(stored.rows[0]!.db) };
    this.cache.remember(runKey, entry);
    return entry;
  }
}

/** An advisory lock held until the transaction ends (commit, rollback, or the session's end). */
async function lock(c: Queryable, name: string): Promise<void> {
  await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
}

async function lookup(q: Queryable, key: string): Promise<WriteRecord | undefined> {
  const { rows } = await q.query<{ record: string }>('SELECT record FROM retail_writes WHERE idempotency_key = $1', [
    key,
  ]);
  return rows[0] ? (JSON.parse(rows[0].record) as WriteRecord) : undefined;
}

async function insertWrite(c: Queryable, key: string, runKey: string, tool: string, record: WriteRecord) {
  await c.query(
    `INSERT INTO retail_writes (idempotency_key, run_key, tool, state, record, created_at)
     VALUES ($1, $2, $3, $4, $5, clock_timestamp())`,
    [key, runKey, tool, record.state, JSON.stringify(record)],
  );
}
