// The refunds service on both backends, real databases each: a SQLite file and a PostgreSQL
// database. One effect per idempotency key, the first outcome for a repeated key, fencing of
// stale attempts, the service's own rules, and two connections (two worker processes) sharing it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { openRefundStore } from '../../domains/support/backend/refunds/open';
import type { RefundsTarget } from '../../domains/support/backend/refunds/open';
import { PostgresRefundService } from '../../domains/support/backend/refunds/postgres';
import type { RefundStore } from '../../domains/support/backend/refunds/rules';
import { FencedError, RefundService } from '../../domains/support/backend/refunds/service';
import { postgresLedger } from '../helpers/postgres-ledger';

interface Backend {
  name: string;
  /** Where a fresh ledger lives; called once per suite. */
  start(): Promise<RefundsTarget>;
  stop(): Promise<void>;
  /** Inserts a row behind the service's back, to show the database's own constraints. */
  rawInsert(target: RefundsTarget, key: string, state: string): Promise<void>;
  uniqueViolation: RegExp;
  checkViolation: RegExp;
}

const sqlite = (): Backend => {
  let dir = '';
  return {
    name: 'SQLite',
    start: async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'refunds-'));
      return { file: path.join(dir, 'nested', 'refunds.sqlite') };
    },
    stop: async () => rmSync(dir, { recursive: true, force: true }),
    rawInsert: async (target, key, state) => {
      const db = new Database((target as { file: string }).file);
      try {
        db.prepare(
          `INSERT INTO refunds (idempotency_key, workflow_id, user_id, amount_cents, reason, state, created_at, updated_at) VALUES (?,'x',1,1,'r',?,'','')`,
        ).run(key, state);
      } finally {
        db.close();
      }
    },
    uniqueViolation: /UNIQUE constraint failed/,
    checkViolation: /CHECK constraint failed/,
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
    rawInsert: async (target, key, state) => {
      const c = new Client({ connectionString: (target as { url: string }).url });
      await c.connect();
      try {
        await c.query(
          `INSERT INTO refunds (idempotency_key, workflow_id, user_id, amount_cents, reason, state, created_at, updated_at) VALUES ($1,'x',1,1,'r',$2,now(),now())`,
          [key, state],
        );
      } finally {
        await c.end();
      }
    },
    uniqueViolation: /duplicate key value violates unique constraint/,
    checkViolation: /violates check constraint/,
  };
};

const req = (key: string, user_id = 42, amount_usd = 49) => ({
  idempotency_key: key,
  workflow_id: 'wf',
  user_id,
  amount_usd,
  reason: 'test',
});

for (const backend of [sqlite(), postgres()]) {
  describe(`refunds service on ${backend.name}`, () => {
    let target: RefundsTarget;
    let svc: RefundStore;
    const others: RefundStore[] = [];
    /** Another connection to the same ledger, as a second worker process has. */
    const another = (): RefundStore => {
      const other = openRefundStore(target);
      others.push(other);
      return other;
    };
    before(async () => {
      target = await backend.start();
      svc = openRefundStore(target);
    });
    after(async () => {
      for (const s of [svc, ...others]) await s?.close();
      await backend.stop();
    });

    it('opens the backend its target names', async () => {
      assert.ok('url' in target ? svc instanceof PostgresRefundService : svc instanceof RefundService);
      assert.match(svc.describe, 'url' in target ? /^postgresql 127\.0\.0\.1:\d+\/refunds_test_/ : /^sqlite /);
      assert.equal(svc.describe.includes('@'), false, 'no credentials in the description');
    });

    it("records when the run's cancel was checked before the commit", async () => {
      const checkedAt = '2026-01-02T03:04:05.678Z';
      const { record } = await svc.plan(req('checked', 1007));
      assert.equal(record.cancel_checked_at, null);
      const confirmed = await svc.confirm({
        idempotency_key: 'checked',
        fence: record.fence,
        paid_usd: 49,
        cancel_checked_at: checkedAt,
      });
      assert.equal(confirmed.cancel_checked_at, checkedAt);
      assert.equal((await svc.lookupByKey('checked'))?.cancel_checked_at, checkedAt);
    });

    it('plans once per key and confirms once: a repeated key gets the first outcome', async () => {
      const first = await svc.plan(req('k1', 1001));
      assert.equal(first.created, true);
      assert.equal(first.record.state, 'planned');
      const confirmed = await svc.confirm({ idempotency_key: 'k1', fence: first.record.fence, paid_usd: 49 });
      assert.equal(confirmed.state, 'confirmed');
      assert.ok(confirmed.confirmed_at);

      const again = await svc.plan({ ...req('k1', 1001), amount_usd: 10 });
      assert.equal(again.created, false);
      assert.deepEqual(again.record, confirmed);
      assert.deepEqual(await svc.confirm({ idempotency_key: 'k1', fence: 99, paid_usd: 49 }), confirmed);
      assert.equal((await svc.list({ user_id: 1001 })).length, 1);
      assert.equal((await svc.lookupByKey('k1'))?.amount_usd, 49);
      assert.equal(await svc.lookupByKey('nope'), undefined);
    });

    it('the unique key and the states hold at the database level', async () => {
      await assert.rejects(backend.rawInsert(target, 'k1', 'planned'), backend.uniqueViolation);
      await assert.rejects(backend.rawInsert(target, 'k-bad', 'done'), backend.checkViolation);
    });

    it('fences off a stale attempt once a newer one has claimed the record', async () => {
      const stale = (await svc.plan(req('k2', 1002))).record;
      const claimed = (await svc.claim('k2'))!;
      assert.equal(claimed.state, 'ambiguous');
      assert.equal(claimed.fence, stale.fence + 1);
      await assert.rejects(svc.confirm({ idempotency_key: 'k2', fence: stale.fence, paid_usd: 49 }), FencedError);
      assert.equal((await svc.lookupByKey('k2'))!.state, 'ambiguous');
      assert.equal(
        (await svc.confirm({ idempotency_key: 'k2', fence: claimed.fence, paid_usd: 49 })).state,
        'confirmed',
      );
      // Claiming a terminal record changes nothing.
      assert.equal((await svc.claim('k2'))!.fence, claimed.fence);
      assert.equal(await svc.claim('never-planned'), undefined);
    });

    it('settles an unfinished record as voided, so a hung attempt cannot confirm it later', async () => {
      const held = (await svc.plan(req('k7', 1007, 5))).record;
      const settled = (await svc.settle('k7'))!;
      assert.deepEqual([settled.state, settled.rejection, settled.fence], ['rejected', 'voided', held.fence + 1]);
      // The hung attempt wakes up and confirms: it gets the settled outcome, and nothing is refunded.
      assert.deepEqual(await svc.confirm({ idempotency_key: 'k7', fence: held.fence, paid_usd: 49 }), settled);
      // A terminal record is settled as it is; an unknown key was never reached.
      assert.deepEqual(await svc.settle('k7'), settled);
      assert.equal(await svc.settle('never-planned'), undefined);
    });

    it('rejects what it must never do, whoever asks: more than paid across runs, nothing paid, no billing', async () => {
      const a = (await svc.plan(req('k3a', 1003, 30))).record;
      assert.equal((await svc.confirm({ idempotency_key: 'k3a', fence: a.fence, paid_usd: 49 })).state, 'confirmed');
      const b = (await svc.plan(req('k3b', 1003, 20))).record; // another run, same user: 30 + 20 > 49
      const rejected = await svc.confirm({ idempotency_key: 'k3b', fence: b.fence, paid_usd: 49 });
      assert.deepEqual([rejected.state, rejected.rejection], ['rejected', 'exceeds_paid']);
      // The rejection is the first outcome for that key, too.
      assert.equal((await svc.confirm({ idempotency_key: 'k3b', fence: b.fence, paid_usd: 1000 })).state, 'rejected');

      const free = (await svc.plan(req('k4', 1004, 1))).record;
      assert.equal(
        (await svc.confirm({ idempotency_key: 'k4', fence: free.fence, paid_usd: 0 })).rejection,
        'nothing_paid',
      );
      const ghost = (await svc.plan(req('k5', 1005, 1))).record;
      assert.equal(
        (await svc.confirm({ idempotency_key: 'k5', fence: ghost.fence, paid_usd: undefined })).rejection,
        'no_billing_record',
      );
    });

    it('is shared safely by two connections (two worker processes)', async () => {
      const other = another();
      const planned = (await svc.plan(req('k6', 1006, 5))).record;
      assert.equal((await other.plan(req('k6', 1006, 5))).created, false);
      assert.equal(
        (await other.confirm({ idempotency_key: 'k6', fence: planned.fence, paid_usd: 49 })).state,
        'confirmed',
      );
      assert.equal((await svc.lookupByKey('k6'))!.state, 'confirmed');
    });

    it('never refunds more than paid when several workers confirm for one user at the same moment', async () => {
      // Per user: three refunds of 20 against 49 paid, each planned and confirmed by a different
      // connection at once. Any two fit, three do not: exactly two may be confirmed.
      const workers = [svc, another(), another()];
      const users = Array.from({ length: 8 }, (_, i) => 2000 + i);
      await Promise.all(
        users.flatMap((user) =>
          workers.map(async (w, i) => {
            const key = `race-${user}-${i}`;
            const { record } = await w.plan(req(key, user, 20));
            return w.confirm({ idempotency_key: key, fence: record.fence, paid_usd: 49 });
          }),
        ),
      );
      for (const user of users) {
        const rows = await svc.list({ user_id: user });
        assert.deepEqual(
          rows.map((r) => r.state).sort(),
          ['confirmed', 'confirmed', 'rejected'],
          `user ${user}: ${JSON.stringify(rows.map((r) => [r.idempotency_key, r.state, r.rejection]))}`,
        );
      }
    });

    it('refuses to confirm what was never planned', async () => {
      await assert.rejects(svc.confirm({ idempotency_key: 'never', fence: 1, paid_usd: 49 }), /never planned/);
    });
  });
}

describe('refunds service on SQLite, its file', () => {
  it('creates its folder and uses WAL', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'refunds-'));
    const file = path.join(dir, 'nested', 'refunds.sqlite');
    const svc = RefundService.open(file);
    try {
      assert.ok(existsSync(file));
      const db = new Database(file, { readonly: true });
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      db.close();
    } finally {
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('adds the cancel_checked_at column to a ledger made before it existed, keeping its rows', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'refunds-'));
    const file = path.join(dir, 'old.sqlite');
    const old = new Database(file);
    old.exec(`CREATE TABLE refunds (
      id INTEGER PRIMARY KEY AUTOINCREMENT, idempotency_key TEXT NOT NULL UNIQUE, workflow_id TEXT NOT NULL,
      user_id INTEGER NOT NULL, amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
      currency TEXT NOT NULL DEFAULT 'USD', reason TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('planned', 'confirmed', 'ambiguous', 'rejected')), rejection TEXT,
      fence INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, confirmed_at TEXT)`);
    old
      .prepare(
        `INSERT INTO refunds (idempotency_key, workflow_id, user_id, amount_cents, reason, state, created_at, updated_at)
         VALUES ('before', 'wf', 1, 100, 'r', 'planned', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
      )
      .run();
    old.close();
    const svc = RefundService.open(file);
    try {
      const held = (await svc.lookupByKey('before'))!;
      assert.equal(held.cancel_checked_at, null);
      const at = '2026-01-01T00:00:01.000Z';
      const done = await svc.confirm({
        idempotency_key: 'before',
        fence: held.fence,
        paid_usd: 5,
        cancel_checked_at: at,
      });
      assert.deepEqual([done.state, done.cancel_checked_at], ['confirmed', at]);
    } finally {
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
