// `npm run server`: a foreground Temporal dev server for local development (Ctrl-C to stop).
// `npm run server -- --postgres`: the production topology instead (local-servers/postgres-server.ts).
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isServerReachable, startDevServer } from '../local-servers/dev-server';
import { localServerConfig } from '../local-servers/local-server';
import { startPostgresServer } from '../local-servers/postgres-server';
import { startUiServer } from '../local-servers/ui-server';
import { repoRoot } from '../local-servers/repo-root';
import type { TemporalServerHandle } from '../local-servers/server-handle';
import { processLog } from '../runtime/process-log';

/** Its report on stdout, its failures on stderr; one JSON object a line each with LOG_FORMAT=json. */
const out = processLog('server', process.env, (line) => void process.stdout.write(`${line}\n`));
const log = processLog('server');

const USAGE = `usage: npm run server [-- --postgres]
  (no option)   the Temporal dev server (SQLite in .temporal/dev.sqlite), with its Web UI
  --postgres    PostgreSQL in .temporal/postgres + the multi-service Temporal server built from source
                at docker-compose.yml's version, configured by deploy/temporal/production.yaml`;

async function main(): Promise<number> {
  let postgres: boolean;
  try {
    const { values } = parseArgs({
      options: { postgres: { type: 'boolean', default: false }, help: { type: 'boolean' } },
    });
    if (values.help) {
      out.info(USAGE);
      return 0;
    }
    postgres = values.postgres;
  } catch (err) {
    log.error(`server: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const cfg = localServerConfig();
  const address = `127.0.0.1:${cfg.port}`;
  if (await isServerReachable(address, cfg.namespace)) {
    out.info(
      `Temporal server already answers at ${address} (namespace ${cfg.namespace}): reusing it, nothing to start.`,
    );
    return 0;
  }
  if (postgres)
    return serveUntilStopped(
      await startPostgres(cfg.port, cfg.uiPort, cfg.namespace, cfg.codecEndpoint),
      'Temporal server, Web UI and PostgreSQL',
    );

  out.info(`Starting Temporal dev server (db ${cfg.dbFile}) ...`);
  const started = Date.now();
  const server = await startDevServer({
    port: cfg.port,
    uiPort: cfg.uiPort,
    httpPort: cfg.httpPort,
    metricsPort: cfg.metricsPort,
    dbFile: cfg.dbFile,
    namespace: cfg.namespace,
    codecEndpoint: cfg.codecEndpoint,
  });
  out.info(`Temporal dev server ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  out.info(`  address:   ${server.address}   (namespace ${server.namespace})`);
  out.info(`  Web UI:    ${server.uiUrl}`);
  out.info(`  log file:  ${server.logFile}`);
  if (cfg.codecEndpoint) {
    out.info(
      `  codec:     ${cfg.codecEndpoint} (payloads are encrypted: run \`npm run codec-server\`, sign in at ${cfg.codecEndpoint}/login)`,
    );
  }
  return serveUntilStopped(server, 'Temporal dev server');
}

async function startPostgres(
  port: number,
  uiPort: number,
  namespace: string,
  codecEndpoint: string | undefined,
): Promise<TemporalServerHandle & { stopAll(): Promise<void> }> {
  const dir = path.join(repoRoot(), '.temporal', 'postgres');
  out.info(`Starting PostgreSQL (data in ${dir}) and the Temporal server ...`);
  const started = Date.now();
  const server = await startPostgresServer({ dir, port, namespace, log: (line) => out.info(`  ${line}`) });
  out.info(`Temporal server ${server.version} on PostgreSQL ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  out.info(`  address:     ${server.address}   (namespace ${server.namespace})`);
  out.info(`  PostgreSQL:  127.0.0.1:${server.postgres.port}   (data ${server.postgres.dataDir})`);
  out.info(`  logs:        ${server.logFile}, ${server.postgres.logFile}`);
  out.info(
    `  refunds:     AGENT_REFUNDS_DATABASE_URL=${server.ledgerUrl}   (set it for every worker: one shared ledger)`,
  );
  out.info(
    `  retail:      AGENT_RETAIL_DATABASE_URL=${server.ledgerUrl}   (the same database: one shared retail store)`,
  );
  const ui = await startUiServer({
    address: server.address,
    namespace,
    port: uiPort,
    codecEndpoint,
    logDir: dir,
    log: (line) => out.info(`  ${line}`),
  }).catch(async (err: Error) => {
    await server.stopAll();
    throw err;
  });
  out.info(`  Web UI:      ${ui.url}   (temporalio/ui ${ui.version}'s server, log ${ui.logFile})`);
  const stopAll = async (): Promise<void> => {
    await ui.stop();
    await server.stopAll();
  };
  return { ...server, uiUrl: ui.url, stop: stopAll, stopAll };
}

/** Runs until Ctrl-C, SIGTERM or the parent's exit, then stops what it started. */
function serveUntilStopped(server: TemporalServerHandle, what: string): Promise<number> {
  out.info('Press Ctrl-C to stop.');
  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (reason: string): void => {
      if (stopping) return;
      stopping = true;
      out.info(`\n${reason}: stopping ${what} ...`);
      server.stop().then(
        () => {
          out.info('Stopped.');
          resolve(0);
        },
        (err: Error) => {
          log.error(`stop failed: ${err.message}`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);
    process.on('SIGHUP', shutdown);
    // `npm run server` runs us under `sh -c "... && node ..."`: a SIGTERM to npm kills sh but not us,
    // so notice being orphaned instead of leaving the server running.
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) shutdown('parent process exited');
    }, 1_000).unref();
    void server.exited().then(({ code, signal }) => {
      if (stopping) return;
      log.error(`${what} exited unexpectedly (${signal ?? `code ${code}`}); see ${server.logFile}`);
      resolve(1);
    });
  });
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    log.error(`server: ${err.message}`);
    process.exit(1);
  },
);
