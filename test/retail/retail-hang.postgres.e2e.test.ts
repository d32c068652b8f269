// The retail store on PostgreSQL with a hung worker (AGENT_TEST_REFUNDS_DATABASE_URL: `--server
// postgres`): a worker frozen (as under SIGSTOP) inside a write holds its key's and its
// conversation's locks. The store's own setting has PostgreSQL end that session after 10 s idle in
// the transaction, so other workers writing that conversation go on; the frozen worker, when it
// wakes, finds its write failed (nothing committed) and does not die of the connection's end; the
// next attempt writes the key once.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PostgresRetailStore } from '../../domains/retail/backend/postgres';
import { RetailToolError } from '../../domains/retail/errors';
import type { Apply } from '../../domains/retail/services';
import { retailToolsByName } from '../../domains/retail/tools/index';

const URL = process.env.AGENT_TEST_REFUNDS_DATABASE_URL;
// The PostgreSQL profile (`npm test -- --server postgres`) sets it; run anywhere else, the file fails.
if (!URL) throw new Error('AGENT_TEST_REFUNDS_DATABASE_URL is unset: run this file with --server postgres');

const ORDER = '#W6779827'; // pending in τ²-bench's database
const cancel = retailToolsByName.get('cancel_pending_order')!;
const cancelling: Apply = (db) => {
  try {
    return { ok: true, result: cancel.handler(db, { order_id: ORDER, reason: 'no longer needed' }) };
  } catch (err) {
    if (err instanceof RetailToolError) return { ok: false, error: err.message };
    throw err;
  }
};

/** The process stops dead for `ms`, as under SIGSTOP: no timers, no I/O, no JavaScript. */
function freeze(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('the PostgreSQL retail store with a hung worker', () => {
  const stores: PostgresRetailStore[] = [];
  const open = () => {
    const store = PostgresRetailStore.open(URL);
    stores.push(store);
    return store;
  };
  after(() => Promise.all(stores.map((s) => s.close().catch(() => undefined))));

  it('a write frozen inside its transaction past the idle-transaction timeout: ended, nothing committed, no crash; the next attempt writes once', async () => {
    const store = open();
    const conversation = `adv-hang-${randomUUID()}/first-run`;
    const key = `${conversation}:1`;
    const uncaught: Error[] = [];
    const onUncaught = (err: Error) => void uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    let outcome: string;
    try {
      // The change is made with both locks held; the worker hangs before it can store it.
      outcome = await store
        .write(conversation, key, 'cancel_pending_order', (db) => {
          freeze(13_000);
          return cancelling(db);
        })
        .then(
          (o) => `committed: ${o.record.state}`,
          (e: unknown) => `failed: ${(e as Error).message}`,
        );
      // Let the socket's last bytes (the FATAL message, the close) be read.
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    assert.deepEqual(
      uncaught.map((e) => e.message),
      [],
      "the worker process would have died of an unhandled 'error' event",
    );
    assert.match(outcome, /^failed: /, 'PostgreSQL ended the hung session: its write did not commit');

    const next = open();
    assert.deepEqual(await next.writesOf(conversation), [], 'nothing of the hung attempt was kept');
    const again = await next.write(conversation, key, 'cancel_pending_order', cancelling);
    assert.deepEqual([again.reconciled, again.record.state], [false, 'applied']);
    assert.equal((await next.database(conversation)).orders[ORDER]!.status, 'cancelled');
    // The hung worker's pool is usable again (its dead connection dropped) and sees the one write.
    assert.equal((await store.reconcile(key, '', 'cancel_pending_order', false))?.state, 'applied');
    assert.equal((await store.writesOf(conversation)).length, 1);
  });
});
