// A PostgreSQL refunds ledger for tests: the one `npm test -- --server postgres` set up with
// deploy/setup-postgres.sh (AGENT_TEST_REFUNDS_DATABASE_URL), or a cluster of the test's own,
// started from the same PostgreSQL programs, with a fresh database. Never a mock.
import { chmodSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from 'pg';
import { makeTempDir } from '../../local-servers/child-processes';
import { startPostgres } from '../../local-servers/postgres-server';
import type { PostgresCluster } from '../../local-servers/postgres-server';
import { readPostgresSettings } from '../../local-servers/postgres-settings';
import { repoRoot } from '../../local-servers/repo-root';

export interface PostgresLedger {
  /** postgres://… for AGENT_REFUNDS_DATABASE_URL. */
  url: string;
  stop(): Promise<void>;
}

let ownCluster: Promise<PostgresCluster> | undefined;
let databases = 0;

/** The profile's ledger when there is one; else a new, empty database in this process's own cluster. */
export async function postgresLedger(opts: { fresh?: boolean } = {}): Promise<PostgresLedger> {
  const shared = process.env.AGENT_TEST_REFUNDS_DATABASE_URL;
  if (shared && !opts.fresh) return { url: shared, stop: async () => undefined };
  if (!ownCluster) {
    const dir = makeTempDir('ledger-postgres-');
    chmodSync(dir, 0o755); // PostgreSQL runs as its own user when we are root: it must reach its data inside
    const settings = readPostgresSettings(path.join(repoRoot(), 'deploy', 'postgres', 'postgresql.conf'));
    ownCluster = startPostgres(dir, undefined, settings, () => undefined);
  }
  const cluster = await ownCluster;
  const database = `refunds_test_${process.pid}_${++databases}`;
  const admin = new Client({ host: '127.0.0.1', port: cluster.port, user: 'temporal', database: 'postgres' });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://temporal@127.0.0.1:${cluster.port}/${database}`,
    stop: async () => {
      const c = ownCluster;
      ownCluster = undefined;
      await (await c)?.stop();
    },
  };
}
