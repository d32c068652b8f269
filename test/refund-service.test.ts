// The refunds service on a real SQLite file: one effect per idempotency key, the first outcome
// for a repeated key, fencing of stale attempts, and the service's own rules.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { FencedError, RefundService } from '../activities/refunds/service';

let dir: string;
let file: string;
let svc: RefundService;
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'refunds-'));
  file = path.join(dir, 'nested', 'refunds.sqlite');
  svc = RefundService.open(file);
});
after(() => {
  svc.close();
  rmSync(dir, { recursive: true, force: true });
});

const req = (key: string, user_id = 42, amount_usd = 49) => ({
  idempotency_key: key,
  workflow_id: 'wf',
  user_id,
  amount_usd,
  reason: 'test',
});

describe('refunds service', () => {
  it('creates its folder and uses WAL', () => {
    assert.ok(existsSync(file));
    const db = new Database(file, { readonly: true });
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    db.close();
  });

  it('plans once per key and confirms once: a repeated key gets the first outcome', () => {
    const first = svc.plan(req('k1', 1001));
    assert.equal(first.created, true);
    assert.equal(first.record.state, 'planned');
    const confirmed = svc.confirm({ idempotency_key: 'k1', fence: first.record.fence, paid_usd: 49 });
    assert.equal(confirmed.state, 'confirmed');
    assert.ok(confirmed.confirmed_at);

    const again = svc.plan({ ...req('k1', 1001), amount_usd: 10 });
    assert.equal(again.created, false);
    assert.deepEqual(again.record, confirmed);
    assert.deepEqual(svc.confirm({ idempotency_key: 'k1', fence: 99, paid_usd: 49 }), confirmed);
    assert.equal(svc.list({ user_id: 1001 }).length, 1);
    assert.equal(svc.lookupByKey('k1')?.amount_usd, 49);
    assert.equal(svc.lookupByKey('nope'), undefined);
  });

  it('the unique key holds at the database level', () => {
    const db = new Database(file);
    const insert = (key: string, state: string) =>
      db
        .prepare(
          `INSERT INTO refunds (idempotency_key, workflow_id, user_id, amount_cents, reason, state, created_at, updated_at) VALUES (?,'x',1,1,'r',?,'','')`,
        )
        .run(key, state);
    assert.throws(() => insert('k1', 'planned'), /UNIQUE constraint failed/);
    assert.throws(() => insert('k-bad', 'done'), /CHECK constraint failed/);
    db.close();
  });

  it('fences off a stale attempt once a newer one has claimed the record', () => {
    const stale = svc.plan(req('k2', 1002)).record;
    const claimed = svc.claim('k2')!;
    assert.equal(claimed.state, 'ambiguous');
    assert.equal(claimed.fence, stale.fence + 1);
    assert.throws(() => svc.confirm({ idempotency_key: 'k2', fence: stale.fence, paid_usd: 49 }), FencedError);
    assert.equal(svc.lookupByKey('k2')!.state, 'ambiguous');
    assert.equal(svc.confirm({ idempotency_key: 'k2', fence: claimed.fence, paid_usd: 49 }).state, 'confirmed');
    // Claiming a terminal record changes nothing.
    assert.equal(svc.claim('k2')!.fence, claimed.fence);
  });

  it('rejects what it must never do, whoever asks: more than paid across runs, nothing paid, no billing', () => {
    const a = svc.plan(req('k3a', 1003, 30)).record;
    assert.equal(svc.confirm({ idempotency_key: 'k3a', fence: a.fence, paid_usd: 49 }).state, 'confirmed');
    const b = svc.plan(req('k3b', 1003, 20)).record; // another run, same user: 30 + 20 > 49
    const rejected = svc.confirm({ idempotency_key: 'k3b', fence: b.fence, paid_usd: 49 });
    assert.deepEqual([rejected.state, rejected.rejection], ['rejected', 'exceeds_paid']);
    // The rejection is the first outcome for that key, too.
    assert.equal(svc.confirm({ idempotency_key: 'k3b', fence: b.fence, paid_usd: 1000 }).state, 'rejected');

    const free = svc.plan(req('k4', 1004, 1)).record;
    assert.equal(svc.confirm({ idempotency_key: 'k4', fence: free.fence, paid_usd: 0 }).rejection, 'nothing_paid');
    const ghost = svc.plan(req('k5', 1005, 1)).record;
    assert.equal(
      svc.confirm({ idempotency_key: 'k5', fence: ghost.fence, paid_usd: undefined }).rejection,
      'no_billing_record',
    );
  });

  it('is shared safely by two connections (two worker processes)', () => {
    const other = RefundService.open(file);
    try {
      const planned = svc.plan(req('k6', 1006, 5)).record;
      assert.equal(other.plan(req('k6', 1006, 5)).created, false);
      assert.equal(other.confirm({ idempotency_key: 'k6', fence: planned.fence, paid_usd: 49 }).state, 'confirmed');
      assert.equal(svc.lookupByKey('k6')!.state, 'confirmed');
    } finally {
      other.close();
    }
  });

  it('refuses to confirm what was never planned', () => {
    assert.throws(() => svc.confirm({ idempotency_key: 'never', fence: 1, paid_usd: 49 }), /never planned/);
  });
});
