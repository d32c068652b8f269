// The refunds service on PostgreSQL: one ledger shared by every worker process, on any host, with
// the same rows, states and rules as the SQLite backend (service.ts). A key is unique in the
// table, so a repeated plan finds the first record; confirm runs in one transaction that locks the
// record (fencing) and then the user (the rule "never more than paid" sums the user's confirmed
// refunds: two workers confirming for one user at once must take turns, or both could pass).
import type { Pool } from 'pg';
import type { ConfirmRequest, PlanRequest, RefundRecord } from '../../refund-ledger';
import { VOIDED } from '../../refund-ledger';
import { checkPostgresUrl } from '../../../../runtime/postgres-url';
import { inTransaction, openPostgresPool, schemaOnce } from '../../../../runtime/postgres-pool';
import type { PostgresTarget } from '../../../../runtime/postgres-url';
import { FencedError, ruleBroken, toCents } from './rules';
import type { RefundFilter, RefundStore } from './rules';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS refunds (
  id              INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  idempotency_key TEXT        NOT NULL UNIQUE,
  workflow_id     TEXT        NOT NULL,
  user_id         BIGINT      NOT NULL,
  amount_cents    BIGINT      NOT NULL CHECK (amount_cents > 0),
  currency        TEXT        NOT NULL DEFAULT 'USD',
  reason          TEXT        NOT NULL,
  state           TEXT        NOT NULL CHECK (state IN ('planned', 'confirmed', 'ambiguous', 'rejected')),
  rejection       TEXT,
  fence           INTEGER     NOT NULL DEFAULT 1,
  created_at      TIMESTAMPTZ NOT NULL,
  updated_at      TIMESTAMPTZ NOT NULL,
  confirmed_at    TIMESTAMPTZ
);
ALTER TABLE refunds ADD COLUMN IF NOT EXISTS cancel_checked_at TIMESTAMPTZ;
CREATE INDEX IF NOT EXISTS refunds_by_user ON refunds (user_id, state);
CREATE INDEX IF NOT EXISTS refunds_by_workflow ON refunds (workflow_id);
`;

/** Advisory lock keys: one for creating the schema, one namespace for users' refund totals. */
const SCHEMA_LOCK = 'agent.refunds.schema';
const USER_LOCK = 'agent.refunds.user';

interface Row {
  id: number;
  idempotency_key: string;
  workflow_id: string;
  user_id: string;
  amount_cents: string;
  currency: string;
  reason: string;
  state: RefundRecord['state'];
  rejection: string | null;
  fence: number;
  created_at: Date;
  updated_at: Date;
  confirmed_at: Date | null;
  cancel_checked_at: Date | null;
}

export class PostgresRefundService implements RefundStore {
  readonly kind = 'postgresql';
  private readonly ready: () => Promise<void>;

  private constructor(
    private readonly pool: Pool,
    readonly describe: string,
  ) {
    this.ready = schemaOnce(pool, SCHEMA_LOCK, SCHEMA);
  }

  /**
   * A pool of a few connections to `url` (postgres://user:password@host:port/database). Nothing
   * connects yet: the first call creates the table if it is missing, and a failed first call is
   * tried again by the next one (the refund activity retries).
   */
  static open(url: string, opts: { maxConnections?: number } = {}): PostgresRefundService {
    const parsed = parseUrl(url);
    return new PostgresRefundService(
      openPostgresPool(url, opts.maxConnections),
      `postgresql ${parsed.host}/${parsed.database}`,
    );
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async query(sql: string, params: unknown[] = []): Promise<Row[]> {
    await this.ready();
    return (await this.pool.query<Row>(sql, params)).rows;
  }

  async lookupByKey(key: string): Promise<RefundRecord | undefined> {
    const [row] = await this.query('SELECT * FROM refunds WHERE idempotency_key = $1', [key]);
    return row ? toRecord(row) : undefined;
  }

  async list(filter: RefundFilter = {}): Promise<RefundRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    for (const column of ['user_id', 'workflow_id', 'state'] as const) {
      const value = filter[column];
      if (value === undefined) continue;
      params.push(value);
      where.push(`${column} = $${params.length}`);
    }
    const sql = `SELECT * FROM refunds ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id`;
    return (await this.query(sql, params)).map(toRecord);
  }

  /** Records the intent (planned, fence 1) once per key; a key seen before returns its record, created false. */
  async plan(req: PlanRequest): Promise<{ record: RefundRecord; created: boolean }> {
    const now = new Date();
    const inserted = await this.query(
      `INSERT INTO refunds (idempotency_key, workflow_id, user_id, amount_cents, currency, reason, state, fence, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'USD', $5, 'planned', 1, $6, $6)
       ON CONFLICT (idempotency_key) DO NOTHING
       RETURNING *`,
      [req.idempotency_key, req.workflow_id, req.user_id, toCents(req.amount_usd), req.reason, now],
    );
    if (inserted[0]) return { record: toRecord(inserted[0]), created: true };
    return { record: (await this.lookupByKey(req.idempotency_key))!, created: false };
  }

  /** Takes over an unfinished record: fence raised, state ambiguous; terminal records unchanged. */
  async claim(key: string): Promise<RefundRecord | undefined> {
    const [claimed] = await this.query(
      `UPDATE refunds SET state = 'ambiguous', fence = fence + 1, updated_at = $1
       WHERE idempotency_key = $2 AND state IN ('planned', 'ambiguous')
       RETURNING *`,
      [new Date(), key],
    );
    return claimed ? toRecord(claimed) : this.lookupByKey(key);
  }

  /** Closes an unfinished record as not made (rejected/voided, fence raised); terminal ones as they are. */
  async settle(key: string): Promise<RefundRecord | undefined> {
    const [settled] = await this.query(
      `UPDATE refunds SET state = 'rejected', rejection = $1, fence = fence + 1, updated_at = $2
       WHERE idempotency_key = $3 AND state IN ('planned', 'ambiguous')
       RETURNING *`,
      [VOIDED, new Date(), key],
    );
    return settled ? toRecord(settled) : this.lookupByKey(key);
  }

  /**
   * The effect, once: confirmed or rejected under the service's rules, in one transaction. The
   * record's row lock orders attempts on one key (the fence decides who may settle it); the user's
   * advisory lock orders confirms of different keys for one user, so the sum of confirmed refunds
   * each one reads is final until it commits. Locks are taken in that order everywhere: no deadlock.
   */
  async confirm(req: ConfirmRequest): Promise<RefundRecord> {
    await this.ready();
    return inTransaction(this.pool, async (c) => {
      const [row] = (
        await c.query<Row>('SELECT * FROM refunds WHERE idempotency_key = $1 FOR UPDATE', [req.idempotency_key])
      ).rows;
      if (!row) throw new Error(`refund ${req.idempotency_key} was never planned`);
      if (row.state === 'confirmed' || row.state === 'rejected') return toRecord(row);
      if (row.fence !== req.fence) throw new FencedError(req.idempotency_key, req.fence, row.fence);

      await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, $2))', [USER_LOCK, row.user_id]);
      const [{ total }] = (
        await c.query<{ total: string }>(
          `SELECT COALESCE(SUM(amount_cents), 0) AS total FROM refunds WHERE user_id = $1 AND state = 'confirmed' AND id <> $2`,
          [row.user_id, row.id],
        )
      ).rows as [{ total: string }];
      const rejection = ruleBroken(Number(row.amount_cents), req.paid_usd, Number(total));
      const now = new Date();
      const checkedAt = req.cancel_checked_at ? new Date(req.cancel_checked_at) : null;
      const [settled] = (
        rejection
          ? await c.query<Row>(
              `UPDATE refunds SET state = 'rejected', rejection = $1, updated_at = $2, cancel_checked_at = $3 WHERE id = $4 RETURNING *`,
              [rejection, now, checkedAt, row.id],
            )
          : await c.query<Row>(
              `UPDATE refunds SET state = 'confirmed', updated_at = $1, confirmed_at = $1, cancel_checked_at = $2 WHERE id = $3 RETURNING *`,
              [now, checkedAt, row.id],
            )
      ).rows as [Row];
      return toRecord(settled);
    });
  }
}

function toRecord(row: Row): RefundRecord {
  return {
    id: row.id,
    idempotency_key: row.idempotency_key,
    workflow_id: row.workflow_id,
    user_id: Number(row.user_id),
    amount_usd: Number(row.amount_cents) / 100,
    currency: row.currency,
    reason: row.reason,
    state: row.state,
    rejection: row.rejection,
    fence: row.fence,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    confirmed_at: row.confirmed_at?.toISOString() ?? null,
    cancel_checked_at: row.cancel_checked_at?.toISOString() ?? null,
  };
}

/** Host and database of a postgres:// URL, for messages (never its password); a one-line error when it is not one. */
export function parseUrl(url: string): PostgresTarget {
  return checkPostgresUrl(url, 'AGENT_REFUNDS_DATABASE_URL');
}
