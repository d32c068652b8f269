// The refunds service on SQLite, the embedded default (postgres.ts is the shared backend): the
// system of record for money sent back to users. A real embedded database (SQLite through
// better-sqlite3, WAL mode), shared by the processes of one host, one row per effect, keyed by the caller's
// idempotency key. It applies an effect at most once per key and answers a repeated key with the
// first outcome; a refund attempt that was interrupted is found here by key and completed, never
// repeated. The record's states and the interface the refund tool uses are in
// domains/support/refund-ledger.ts.
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type Database from 'better-sqlite3';
import type { ConfirmRequest, PlanRequest, RefundRecord } from '../../refund-ledger';
import { VOIDED } from '../../refund-ledger';
import { readEnv } from '../../../../runtime/env-vars';
import { FencedError, ruleBroken, toCents } from './rules';
import type { RefundFilter, RefundStore, ServiceRejection } from './rules';

export type { ConfirmRequest, EffectState, PlanRequest, RefundRecord } from '../../refund-ledger';
export { VOIDED } from '../../refund-ledger';
export { EFFECT_STATES, FencedError, SERVICE_RULES, toCents } from './rules';
export type { RefundFilter, RefundStore, ServiceRejection } from './rules';

export function refundsDbPathFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return readEnv('AGENT_REFUNDS_DB', env);
}

/** A row as stored: the amount in whole cents. */
type Row = Omit<RefundRecord, 'amount_usd'> & { amount_cents: number };

const SCHEMA = `
CREATE TABLE IF NOT EXISTS refunds (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  idempotency_key TEXT    NOT NULL UNIQUE,
  workflow_id     TEXT    NOT NULL,
  user_id         INTEGER NOT NULL,
  amount_cents    INTEGER NOT NULL CHECK (amount_cents > 0),
  currency        TEXT    NOT NULL DEFAULT 'USD',
  reason          TEXT    NOT NULL,
  state           TEXT    NOT NULL CHECK (state IN ('planned', 'confirmed', 'ambiguous', 'rejected')),
  rejection       TEXT,
  fence           INTEGER NOT NULL DEFAULT 1,
  created_at      TEXT    NOT NULL,
  updated_at      TEXT    NOT NULL,
  confirmed_at    TEXT,
  cancel_checked_at TEXT
);
CREATE INDEX IF NOT EXISTS refunds_by_user ON refunds (user_id, state);
CREATE INDEX IF NOT EXISTS refunds_by_workflow ON refunds (workflow_id);
`;

/**
 * The SQLite backend. Its calls are synchronous underneath (better-sqlite3); they answer as
 * promises so the refund tool treats every backend alike.
 */
export class RefundService implements RefundStore {
  readonly kind = 'sqlite';

  private constructor(
    private readonly db: Database.Database,
    readonly describe: string,
  ) {}

  /** Opens (and creates, with its folder) the database; WAL so readers never block the writer. */
  static open(file: string): RefundService {
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    // Loaded here, not at import: a worker opens the database on its first refund, not at start.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const db = new (require('better-sqlite3') as typeof Database)(file);
    // First: several processes may open (and create) one file at once, and switching it to WAL
    // takes a lock; without a busy timeout yet, the loser fails at once with SQLITE_BUSY.
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL'); // a confirmed refund survives a power cut, not only a crash
    db.exec(SCHEMA);
    addMissingColumns(db);
    return new RefundService(db, `sqlite ${file}`);
  }

  async close(): Promise<void> {
    this.db.close();
  }

  async lookupByKey(key: string): Promise<RefundRecord | undefined> {
    return this.find(key);
  }

  private find(key: string): RefundRecord | undefined {
    const row = this.db.prepare('SELECT * FROM refunds WHERE idempotency_key = ?').get(key) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  async list(filter: RefundFilter = {}): Promise<RefundRecord[]> {
    return this.listSync(filter);
  }

  /** list(), answered at once: for a reader of a local file (tests, the demo, the eval's checks) polling in a loop. */
  listSync(filter: RefundFilter = {}): RefundRecord[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.user_id !== undefined) {
      where.push('user_id = ?');
      params.push(filter.user_id);
    }
    if (filter.workflow_id !== undefined) {
      where.push('workflow_id = ?');
      params.push(filter.workflow_id);
    }
    if (filter.state !== undefined) {
      where.push('state = ?');
      params.push(filter.state);
    }
    const sql = `SELECT * FROM refunds ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id`;
    return (this.db.prepare(sql).all(...params) as Row[]).map(toRecord);
  }

  /**
   * Records the intent (state planned, fence 1). A key seen before is not planned again: the
   * existing record comes back with created false, whatever its state, so the caller reconciles
   * instead of repeating.
   */
  async plan(req: PlanRequest): Promise<{ record: RefundRecord; created: boolean }> {
    const now = new Date().toISOString();
    const info = this.db
      .prepare(
        `INSERT INTO refunds (idempotency_key, workflow_id, user_id, amount_cents, currency, reason, state, fence, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'USD', ?, 'planned', 1, ?, ?)
         ON CONFLICT (idempotency_key) DO NOTHING`,
      )
      .run(req.idempotency_key, req.workflow_id, req.user_id, toCents(req.amount_usd), req.reason, now, now);
    return { record: this.find(req.idempotency_key)!, created: info.changes === 1 };
  }

  /**
   * An attempt found the record unresolved (planned or ambiguous: an earlier attempt ended without
   * reporting). It claims the record, which raises the fencing token so the earlier attempt, should
   * it still be running somewhere, can no longer settle it, and marks it ambiguous until this
   * attempt has reconciled it. Terminal records are returned unchanged.
   */
  async claim(key: string): Promise<RefundRecord | undefined> {
    this.db
      .prepare(
        `UPDATE refunds SET state = 'ambiguous', fence = fence + 1, updated_at = ?
         WHERE idempotency_key = ? AND state IN ('planned', 'ambiguous')`,
      )
      .run(new Date().toISOString(), key);
    return this.find(key);
  }

  /**
   * Settles a record whose run is ending without knowing its outcome. A terminal record is
   * returned as it is (the refund happened, or was refused). An unfinished one (planned, or
   * ambiguous after an interrupted attempt) is marked rejected/voided and its fence raised, in one
   * transaction, so an attempt still hanging somewhere can never confirm it later. Unknown key:
   * undefined (the call never reached the service).
   */
  async settle(key: string): Promise<RefundRecord | undefined> {
    const tx = this.db.transaction((): RefundRecord | undefined => {
      this.db
        .prepare(
          `UPDATE refunds SET state = 'rejected', rejection = ?, fence = fence + 1, updated_at = ?
           WHERE idempotency_key = ? AND state IN ('planned', 'ambiguous')`,
        )
        .run(VOIDED, new Date().toISOString(), key);
      return this.find(key);
    });
    return tx.immediate();
  }

  /**
   * The effect itself, in one IMMEDIATE transaction: the refund is made (confirmed) or refused
   * (rejected) exactly once. A terminal record is returned as it is (the first outcome). Only the
   * latest claimant (the current fence) may settle it; an older one gets FencedError.
   */
  async confirm(req: ConfirmRequest): Promise<RefundRecord> {
    const tx = this.db.transaction((): RefundRecord => {
      const row = this.db.prepare('SELECT * FROM refunds WHERE idempotency_key = ?').get(req.idempotency_key) as
        Row | undefined;
      if (!row) throw new Error(`refund ${req.idempotency_key} was never planned`);
      if (row.state === 'confirmed' || row.state === 'rejected') return toRecord(row);
      if (row.fence !== req.fence) throw new FencedError(req.idempotency_key, req.fence, row.fence);

      const now = new Date().toISOString();
      const rejection = this.ruleBroken(row, req.paid_usd);
      if (rejection) {
        this.db
          .prepare(
            `UPDATE refunds SET state = 'rejected', rejection = ?, updated_at = ?, cancel_checked_at = ? WHERE id = ?`,
          )
          .run(rejection, now, req.cancel_checked_at ?? null, row.id);
      } else {
        this.db
          .prepare(
            `UPDATE refunds SET state = 'confirmed', updated_at = ?, confirmed_at = ?, cancel_checked_at = ? WHERE id = ?`,
          )
          .run(now, now, req.cancel_checked_at ?? null, row.id);
      }
      return toRecord(this.db.prepare('SELECT * FROM refunds WHERE id = ?').get(row.id) as Row);
    });
    return tx.immediate();
  }

  private ruleBroken(row: Row, paidUsd: number | undefined): ServiceRejection | undefined {
    const { total } = this.db
      .prepare(
        `SELECT COALESCE(SUM(amount_cents), 0) AS total FROM refunds WHERE user_id = ? AND state = 'confirmed' AND id <> ?`,
      )
      .get(row.user_id, row.id) as { total: number };
    return ruleBroken(row.amount_cents, paidUsd, total);
  }
}

/** A ledger file made by an earlier version gains the columns added since (SQLite has no ADD COLUMN IF NOT EXISTS). */
function addMissingColumns(db: Database.Database): void {
  const columns = new Set((db.pragma('table_info(refunds)') as Array<{ name: string }>).map((c) => c.name));
  if (!columns.has('cancel_checked_at')) db.exec('ALTER TABLE refunds ADD COLUMN cancel_checked_at TEXT');
}

function toRecord(row: Row): RefundRecord {
  const { amount_cents, ...rest } = row;
  return { ...rest, amount_usd: amount_cents / 100 };
}
