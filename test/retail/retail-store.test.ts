// The retail store on both backends, real databases each: a SQLite file and a PostgreSQL database.
// Each write once per idempotency key, the first outcome for a repeated key, a settled key never
// applied, a write that throws half-way leaving nothing behind, and connections racing (as worker
// processes do): one key from two connections, several keys of one conversation at once, a write
// against its run's settle; a Python int kept through storage, so the database hashes like τ²-bench's.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { RetailStoreBackend } from '../../domains/retail/backend/store-backend';
import { openRetailStore } from '../../domains/retail/backend/open';
import type { RetailTarget } from '../../domains/retail/backend/open';
import { PostgresRetailStore } from '../../domains/retail/backend/postgres';
import { RetailStore } from '../../domains/retail/backend/store';
import { snapshot } from '../../domains/retail/db';
import { RetailToolError } from '../../domains/retail/errors';
import { getDbHash } from '../../domains/retail/hash';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { PythonInt } from '../../domains/retail/python/int';
import type { Apply } from '../../domains/retail/services';
import { retailToolsByName } from '../../domains/retail/tools/index';
import { postgresLedger } from '../helpers/postgres-ledger';

interface Backend {
  name: string;
  /** Where a fresh store lives; called once per suite. */
  start(): Promise<RetailTarget>;
  stop(): Promise<void>;
}

const sqlite = (): Backend => {
  let dir = '';
  return {
    name: 'SQLite',
    start: async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'retail-store-'));
      return { file: path.join(dir, 'nested', 'retail.sqlite') };
    },
    stop: async () => rmSync(dir, { recursive: true, force: true }),
  };
};

const postgres = (): Backend => {
  let stop = async (): Promise<void> => undefined;
  return {
    name: 'PostgreSQL',
    start: async () => {
      const ledger = await postgresLedger({ fresh: true });
      stop = ledger.stop;
      return { url: ledger.url };
    },
    stop: () => stop(),
  };
};

// From τ²-bench's retail database.
const PENDING = ['#W5918442', '#W2974929', '#W2631563', '#W6779827'];
const DELIVERED = '#W4817420';

const cancel = retailToolsByName.get('cancel_pending_order')!;
const cancelling =
  (order_id: string): Apply =>
  (db) => {
    try {
      return { ok: true, result: cancel.handler(db, { order_id, reason: 'no longer needed' }) };
    } catch (err) {
      if (err instanceof RetailToolError) return { ok: false, error: err.message };
      throw err;
    }
  };

for (const backend of [sqlite(), postgres()]) {
  describe(`retail store on ${backend.name}`, () => {
    let target: RetailTarget;
    const opened: RetailStoreBackend[] = [];
    /** A connection of its own to the store, as each worker process has (and a cache of its own). */
    const connect = (): RetailStoreBackend => {
      const store = openRetailStore(target);
      opened.push(store);
      return store;
    };
    let run = 0;
    const nextRun = () => `wf-${backend.name}-${++run}/first-run`;
    before(async () => {
      target = await backend.start();
    });
    after(async () => {
      for (const s of opened) await s.close();
      await backend.stop();
    });

    it('opens the backend its target names, described without credentials', () => {
      const store = connect();
      assert.ok('url' in target ? store instanceof PostgresRetailStore : store instanceof RetailStore);
      assert.match(store.describe, 'url' in target ? /^postgresql 127\.0\.0\.1:\d+\/refunds_test_/ : /^sqlite /);
      assert.equal(store.describe.includes('@'), false);
    });

    it('a key applied once answers every later attempt, on any connection, with the first outcome', async () => {
      const [a, b] = [connect(), connect()];
      const runKey = nextRun();
      const first = await a.write(runKey, `${runKey}:1`, 'cancel_pending_order', cancelling(PENDING[0]!));
      const again = await b.write(runKey, `${runKey}:1`, 'cancel_pending_order', cancelling(PENDING[0]!));
      assert.deepEqual([first.reconciled, first.record.state], [false, 'applied']);
      assert.deepEqual([again.reconciled, again.record], [true, first.record]);
      assert.equal((await b.database(runKey)).orders[PENDING[0]!]!.status, 'cancelled');
      assert.equal((await b.database(nextRun())).orders[PENDING[0]!]!.status, 'pending', 'a database per conversation');
      // A refusal is recorded too: the second cancel under another key is refused by the tool itself.
      const second = await b.write(runKey, `${runKey}:2`, 'cancel_pending_order', cancelling(PENDING[0]!));
      assert.deepEqual(second.record, { state: 'refused', error: 'Non-pending order cannot be cancelled' });
      assert.deepEqual(
        (await a.writesOf(runKey)).map((w) => w.state),
        ['applied', 'refused'],
      );
    });

    it('a write that throws half-way commits nothing: the same connection reads the database as before, and the key stays free', async () => {
      const store = connect();
      const runKey = nextRun();
      // A first write: the connection now holds the run's own copy (the SQLite store changes it in place).
      await store.write(runKey, `${runKey}:1`, 'cancel_pending_order', cancelling(PENDING[0]!));
      const broken: Apply = (db) => {
        db.orders[PENDING[1]!]!.status = 'cancelled';
        throw new Error('the tool broke half-way');
      };
      await assert.rejects(store.write(runKey, `${runKey}:2`, 'cancel_pending_order', broken), /broke half-way/);
      assert.equal(await store.read(runKey, (db) => db.orders[PENDING[1]!]!.status), 'pending');
      assert.equal((await store.database(runKey)).orders[PENDING[0]!]!.status, 'cancelled');
      const retried = await store.write(runKey, `${runKey}:2`, 'cancel_pending_order', cancelling(PENDING[1]!));
      assert.equal(retried.record.state, 'applied');
      assert.deepEqual(
        (await store.writesOf(runKey)).map((w) => w.state),
        ['applied', 'applied'],
      );
    });

    it('a key settled as not made is never applied afterwards', async () => {
      const store = connect();
      const runKey = nextRun();
      assert.equal(await store.reconcile(`${runKey}:1`, '', 'cancel_pending_order', false), undefined);
      assert.deepEqual(await store.reconcile(`${runKey}:1`, '', 'cancel_pending_order', true), { state: 'not_made' });
      const late = await store.write(runKey, `${runKey}:1`, 'cancel_pending_order', cancelling(PENDING[0]!));
      assert.deepEqual([late.reconciled, late.record], [true, { state: 'not_made' }]);
      assert.equal((await store.database(runKey)).orders[PENDING[0]!]!.status, 'pending');
    });

    it('one key written from two connections at once: applied once, every attempt told the one outcome', async () => {
      const [a, b] = [connect(), connect()];
      const runKey = nextRun();
      const key = `${runKey}:race`;
      const outcomes = await Promise.all(
        [a, b, a, b, a, b].map((s) => s.write(runKey, key, 'cancel_pending_order', cancelling(PENDING[1]!))),
      );
      assert.equal(outcomes.filter((o) => !o.reconciled).length, 1, JSON.stringify(outcomes));
      for (const o of outcomes) assert.equal(o.record.state, 'applied');
      assert.deepEqual(await a.writesOf(runKey), [{ key, tool: 'cancel_pending_order', state: 'applied' }]);
    });

    it('several keys of one conversation written at once from two connections: each applied on the others, none lost', async () => {
      const [a, b] = [connect(), connect()];
      const runKey = nextRun();
      const outcomes = await Promise.all(
        PENDING.map((order, i) =>
          (i % 2 ? a : b).write(runKey, `${runKey}:${i}`, 'cancel_pending_order', cancelling(order)),
        ),
      );
      assert.deepEqual(
        outcomes.map((o) => o.record.state),
        PENDING.map(() => 'applied'),
      );
      for (const store of [a, b, connect()]) {
        const db = await store.database(runKey);
        assert.deepEqual(
          PENDING.map((order) => db.orders[order]!.status),
          PENDING.map(() => 'cancelled'),
          'every write applied to the result of the ones before it',
        );
      }
    });

    it("a write racing its run's settle of the key: both report the one outcome recorded", async () => {
      const [a, b] = [connect(), connect()];
      for (let i = 0; i < 4; i++) {
        const runKey = nextRun();
        const key = `${runKey}:1`;
        const [written, settled] = await Promise.all([
          a.write(runKey, key, 'cancel_pending_order', cancelling(PENDING[2]!)),
          b.reconcile(key, '', 'cancel_pending_order', true),
        ]);
        assert.deepEqual(settled, written.record);
        const status = (await b.database(runKey)).orders[PENDING[2]!]!.status;
        assert.equal(status, written.record.state === 'applied' ? 'cancelled' : 'pending');
      }
    });

    it('a Python int in a float field survives storage: the database hashes as the one written', async () => {
      const runKey = nextRun();
      const expected = loadRetailDb();
      const markExchange: Apply = (db) => {
        db.orders[DELIVERED]!.exchange_price_difference = new PythonInt(0);
        return { ok: true, result: null };
      };
      markExchange(expected);
      await connect().write(runKey, `${runKey}:1`, 'exchange_delivered_order_items', markExchange);
      // Another connection: it parses the stored text, no copy cached from the write.
      const stored = await connect().database(runKey);
      assert.ok(stored.orders[DELIVERED]!.exchange_price_difference instanceof PythonInt);
      assert.equal(getDbHash(stored), getDbHash(expected));
      const asFloat = snapshot(expected);
      asFloat.orders[DELIVERED]!.exchange_price_difference = 0;
      assert.notEqual(getDbHash(asFloat), getDbHash(expected), 'the int and the float hash apart');
    });

    it("finds a workflow's latest conversation that wrote; a state key is taken as given", async () => {
      const store = connect();
      const workflow = `wf-latest-${backend.name}`;
      await store.write(`${workflow}/run-a`, `${workflow}:a`, 'cancel_pending_order', cancelling(PENDING[0]!));
      await store.write(`${workflow}/run-b`, `${workflow}:b`, 'cancel_pending_order', cancelling(PENDING[1]!));
      assert.equal(await store.conversationOf(workflow), `${workflow}/run-b`);
      assert.equal(await store.conversationOf(`${workflow}/run-a`), `${workflow}/run-a`);
      assert.equal(await store.conversationOf('never-wrote'), 'never-wrote');
    });
  });
}
