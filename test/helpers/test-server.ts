// A Temporal server of a test file's own (one it kills or restarts): the dev server, or with
// `npm test -- --server postgres` (AGENT_TEST_SERVER=postgres) the PostgreSQL-backed multi-service
// server, so the same fault runs against both.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startDevServer } from '../../local-servers/dev-server';
import { startPostgresServer } from '../../local-servers/postgres-server';
import type { PostgresTemporalServer } from '../../local-servers/postgres-server';
import type { TemporalServerHandle } from '../../local-servers/server-handle';
import type { TemporalEnv } from '../../runtime/temporal-env';

export type TestServerKind = 'dev' | 'postgres';

/** The kind of server `npm test` runs the suite on. */
export function testServerKind(): TestServerKind {
  return process.env.AGENT_TEST_SERVER === 'postgres' ? 'postgres' : 'dev';
}

export async function startOwnServer(kind = testServerKind()): Promise<TemporalServerHandle> {
  if (kind === 'postgres') return startOwnPostgresServer();
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-own-server-'));
  return startDevServer({ dbFile: path.join(dir, 'temporal.sqlite'), cliPath: process.env.TEMPORAL_CLI_PATH });
}

export function startOwnPostgresServer(): Promise<PostgresTemporalServer> {
  return startPostgresServer();
}

/** What agentFixture's `server` option needs, from a server handle. */
export function serverEnv(server: TemporalServerHandle): Pick<TemporalEnv, 'address' | 'namespace' | 'uiUrl'> {
  return { address: server.address, namespace: server.namespace, uiUrl: server.uiUrl ?? '' };
}

/** Stops a server and, for the PostgreSQL-backed one, PostgreSQL too. */
export async function stopOwnServer(server: TemporalServerHandle | undefined): Promise<void> {
  if (!server) return;
  if ('stopAll' in server) await (server as PostgresTemporalServer).stopAll();
  else await server.stop();
}
