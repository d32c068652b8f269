// Found by an adversary: the shared ledger on PostgreSQL (AGENT_TEST_REFUNDS_DATABASE_URL: `--server postgres`,
// or any PostgreSQL URL whose user may create a table). A worker hung inside confirm (SIGSTOP: its
// event loop frozen while it waits for a reply) holds the record's lock; the ledger's own setting
// has PostgreSQL end that session after 10 s, so other workers go on. When the hung worker wakes up
// it reads the reply and then PostgreSQL's FATAL message, with no query left to fail: node-postgres
// emits 'error' on a client checked out of the pool, which nobody listens to, and the worker dies.
// The same when PostgreSQL ends a confirm's session (pg_terminate_backend, a restart, a failover):
// the connection's end is emitted as 'error' on the checked-out client while ROLLBACK is pending.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as pg from 'pg';
import { PostgresRefundService } from '../../domains/support/backend/refunds/postgres';

const URL = process.env.AGENT_TEST_REFUNDS_DATABASE_URL;
// The PostgreSQL profile (`npm test -- --server postgres`) sets it; run anywhere else, the file fails.
if (!URL) throw new Error('AGENT_TEST_REFUNDS_DATABASE_URL is unset: run this file with --server postgres');

/** The process stops dead for `ms`, as under SIGSTOP: no timers, no I/O, no JavaScript. */
function freeze(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Until a session waits for the user's advisory lock: the confirm under test. */
async function waitingForUserLock(): Promise<void> {
  const probe = new pg.Client({ connectionString: URL });
  await probe.connect();
  try {
    for (;;) {
      const { rows } = await probe.query(
        "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%' AND pid <> pg_backend_pid()",
      );
      if (rows.length > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await probe.end();
  }
}

describe('the PostgreSQL ledger with a hung worker', () => {
  const stores: PostgresRefundService[] = [];
  const open = () => {
    const store = PostgresRefundService.open(URL!);
    stores.push(store);
    return store;
  };
  after(() => Promise.all(stores.map((s) => s.close().catch(() => undefined))));

  it('eight workers confirming different refunds for one user at once never pass what the user paid', async () => {
    const userId = 910_000 + Math.floor(Math.random() * 1000);
    const workers = Array.from({ length: 8 }, () => open());
    const keys = workers.map(() => `adv-race-${randomUUID()}`);
    await Promise.all(
      workers.map((w, i) =>
        w.plan({ idempotency_key: keys[i]!, workflow_id: keys[i]!, user_id: userId, amount_usd: 30, reason: 'race' }),
      ),
    );
    const records = await Promise.all(
      workers.map((w, i) => w.confirm({ idempotency_key: keys[i]!, fence: 1, paid_usd: 100 })),
    );
    assert.equal(records.filter((r) => r.state === 'confirmed').length, 3);
    const confirmed = await workers[0]!.list({ user_id: userId, state: 'confirmed' });
    assert.ok(confirmed.reduce((sum, r) => sum + r.amount_usd, 0) <= 100);
  });
  it('a worker frozen inside confirm waiting for the user lock, past the idle-transaction timeout, does not crash when it wakes', async () => {
    const store = open();
    const key = `adv-hang-${randomUUID()}`;
    const userId = 900_000 + Math.floor(Math.random() * 1000);
    await store.plan({ idempotency_key: key, workflow_id: key, user_id: userId, amount_usd: 10, reason: 'hang' });

    // Another worker's confirm for this user holds the user's lock for 2 s more (it commits on its own).
    const other = new pg.Client({ connectionString: URL });
    await other.connect();
    await other.query('BEGIN');
    await other.query("SELECT pg_advisory_xact_lock(hashtextextended('agent.refunds.user', $1))", [userId]);
    void other.query('SELECT pg_sleep(2); COMMIT').finally(() => other.end());

    const uncaught: Error[] = [];
    const onUncaught = (err: Error) => void uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const confirming = store.confirm({ idempotency_key: key, fence: 1, paid_usd: 100 }).then(
        (r) => `confirmed: ${r.state}`,
        (e: unknown) => `failed: ${(e as Error).message}`,
      );
      await waitingForUserLock();
      // This worker hangs while it waits (SIGSTOP): it holds the record's row lock, gets the user's
      // lock 2 s later without reading the reply, and PostgreSQL ends the session 10 s after that.
      freeze(14_000);
      const outcome = await confirming;
      // Let the socket's last bytes (the FATAL message, the close) be read.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(
        uncaught.map((e) => e.message),
        [],
        `confirm ${outcome}; the worker process would have died of an unhandled 'error' event`,
      );
    } finally {
      process.off('uncaughtException', onUncaught);
    }

    // The record is still decidable by the next attempt (another worker).
    const next = open();
    const claimed = await next.claim(key);
    const settled = await next.confirm({ idempotency_key: key, fence: claimed!.fence, paid_usd: 100 });
    assert.equal(settled.state, 'confirmed');
  });

  it('a confirm whose session is terminated (pg_terminate_backend) while it waits does not crash the worker, and the next attempt settles it once', async () => {
    const store = open();
    const key = `adv-term-${randomUUID()}`;
    const userId = 920_000 + Math.floor(Math.random() * 1000);
    await store.plan({ idempotency_key: key, workflow_id: key, user_id: userId, amount_usd: 10, reason: 'term' });
    const other = new pg.Client({ connectionString: URL });
    await other.connect();
    await other.query('BEGIN');
    await other.query("SELECT pg_advisory_xact_lock(hashtextextended('agent.refunds.user', $1))", [userId]);
    const uncaught: Error[] = [];
    const onUncaught = (err: Error) => void uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const confirming = store.confirm({ idempotency_key: key, fence: 1, paid_usd: 100 }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      await waitingForUserLock();
      // What a PostgreSQL restart or failover does to every session, here to the confirm's alone.
      await other.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%'",
      );
      await other.query('COMMIT');
      await other.end();
      assert.ok(await confirming, 'the terminated confirm reported success');
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(
        uncaught.map((e) => e.message),
        [],
        "the worker process would have died of an unhandled 'error' event on the confirm's client",
      );
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    const next = open();
    const claimed = await next.claim(key);
    const settled = await next.confirm({ idempotency_key: key, fence: claimed!.fence, paid_usd: 100 });
    assert.equal(settled.state, 'confirmed');
    // The first attempt's pool is usable again: its dead connection was dropped.
    assert.equal((await store.lookupByKey(key))?.state, 'confirmed');
    assert.equal((await next.list({ user_id: userId, state: 'confirmed' })).length, 1);
  });
});
