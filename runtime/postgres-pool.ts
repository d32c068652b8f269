// What the PostgreSQL systems of record (the refunds ledger, the retail store) share: a small pool
// that survives the server ending sessions under it, a transaction that never lets such an end kill
// the worker, and a schema created once however many workers start on an empty database at once.
import type * as pg from 'pg';
import type { Pool, PoolClient } from 'pg';

/**
 * A pool of a few connections to `url`; nothing connects yet. A worker hung (SIGSTOP) inside a
 * transaction holds its locks: the server ends its session after 10 s idle in it, so other workers
 * go on; and a statement waiting on a lock gives up before an activity's 30 s attempt timeout.
 */
export function openPostgresPool(url: string, maxConnections = 4): Pool {
  // Loaded here, not at import: a worker loads the client on its first use, not at start.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Pool } = require('pg') as typeof pg;
  const pool = new Pool({
    connectionString: url,
    max: maxConnections,
    connectionTimeoutMillis: 10_000,
    idle_in_transaction_session_timeout: 10_000,
    statement_timeout: 20_000,
  });
  // An idle connection the server drops (restart, failover) must not crash the worker; the pool
  // replaces it on the next call.
  pool.on('error', () => undefined);
  // Nor one ended while checked out: between pool.connect() handing a client out and its user's
  // own listener (a session ended in the same read as its ReadyForQuery) no pool listener is on
  // it, and an unheard 'error' kills the process. This one stays for the client's whole life; the
  // operation in flight fails (its query rejects, or the next one on the closed client does) and
  // the activity retries it.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Runs `work` in one transaction on one checked-out connection: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // Whether the server ended the session under this operation (a restart, a failover, the
  // idle-in-transaction timeout after a hang): the query in flight rejects anyway; a broken client
  // is dropped, not pooled again (the pool's own check drops one that ended before this listener).
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken = err;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const out = await work(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    if (!broken) await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/**
 * Creates the tables of `schema` on first use, once per process. Several workers may start on an
 * empty database at once and CREATE ... IF NOT EXISTS alone races: an advisory lock named `lock`
 * orders them. A failed attempt is tried again by the next call (the activities retry).
 */
export function schemaOnce(pool: Pool, lock: string, schema: string): () => Promise<void> {
  let ready: Promise<void> | undefined;
  return () => {
    ready ??= inTransaction(pool, async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lock]);
      await c.query(schema);
    }).catch((err: unknown) => {
      ready = undefined;
      throw err;
    });
    return ready;
  };
}
