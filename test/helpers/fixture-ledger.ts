// The refunds ledger of one refund fixture, on the backend of the server the suite runs on: a
// SQLite file of the fixture's own on the dev server; in the PostgreSQL profile (`npm test --
// --server postgres`) the profile's shared ledger database (deploy/setup-postgres.sh), in a schema
// of the fixture's own. Test files sharing that database must not see each other's rows, nor each
// other's users: every file refunds users 1001, 1002, ... and the rule "never more than paid" sums
// a user's refunds across the table. The workers reach the schema through the URL's search_path,
// so their code is what production runs; the test reads the same rows through the same store.
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { Client } from 'pg';
import { PostgresRefundService } from '../../domains/support/backend/refunds/postgres';
import { RefundService } from '../../domains/support/backend/refunds/service';
import type { RefundStore } from '../../domains/support/backend/refunds/rules';

export type LedgerKind = 'sqlite' | 'postgresql';

export interface FixtureLedger {
  kind: LedgerKind;
  /** The one variable that points a worker at this ledger (AGENT_REFUNDS_DB or AGENT_REFUNDS_DATABASE_URL). */
  workerEnv: Record<string, string>;
  /** The SQLite file; undefined on PostgreSQL. */
  dbFile: string | undefined;
  /** The ledger read as an operator would: a connection of the test's own, never the workers'. */
  store(): RefundStore;
  close(): Promise<void>;
}

/** The profile's shared ledger when the suite runs on the PostgreSQL-backed server. */
export function profileLedgerUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.AGENT_TEST_SERVER !== 'postgres') return undefined;
  return env.AGENT_TEST_REFUNDS_DATABASE_URL || undefined;
}

/**
 * The fixture's ledger: PostgreSQL at `url` (a schema named after `label`, created now) when a URL
 * is given, else the SQLite file `db/refunds.sqlite` in `dir`.
 */
export async function fixtureLedger(dir: string, label: string, url = profileLedgerUrl()): Promise<FixtureLedger> {
  if (!url) return sqliteLedger(path.join(dir, 'db', 'refunds.sqlite'));
  return postgresLedgerSchema(url, label);
}

function sqliteLedger(dbFile: string): FixtureLedger {
  let store: RefundService | undefined;
  return {
    kind: 'sqlite',
    workerEnv: { AGENT_REFUNDS_DB: dbFile },
    dbFile,
    store: () => (store ??= RefundService.open(dbFile)),
    close: async () => store?.close(),
  };
}

async function postgresLedgerSchema(url: string, label: string): Promise<FixtureLedger> {
  // Lower case, digits and '_' only: the name needs no quoting, in SQL or in search_path.
  const slug = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 40);
  const schema = `t_${slug}_${randomUUID().slice(0, 8)}`;
  const admin = new Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  // node-postgres sends `options` as the session's startup options: every connection of the
  // worker's pool then creates and reads its `refunds` table in this schema. The schema is not
  // dropped: the profile's PostgreSQL is a temporary cluster, kept only after a failed run, for its rows.
  const schemaUrl = `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  let store: PostgresRefundService | undefined;
  return {
    kind: 'postgresql',
    workerEnv: { AGENT_REFUNDS_DATABASE_URL: schemaUrl },
    dbFile: undefined,
    store: () => (store ??= PostgresRefundService.open(schemaUrl)),
    close: async () => store?.close(),
  };
}
