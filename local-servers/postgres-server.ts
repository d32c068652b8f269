// The production topology on this machine, without Docker: a PostgreSQL cluster in a folder of its
// own, the databases set up by deploy/setup-postgres.sh (the script the compose file runs), and the
// multi-service Temporal server (built from source at the compose file's version) started with
// deploy/temporal/production.yaml (the config the compose file mounts), and the agent's refunds
// ledger (its own database and user, as in compose). Used by
// `npm run server -- --postgres`, `npm test -- --server postgres` and `npm run bench -- --server postgres`.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { initNamespace } from './namespace';
import { isServerReachable } from './dev-server';
import { freePort, isPortFree } from './free-port';
import { findOrBuildTemporalServer } from './temporal-server-binaries';
import type { TemporalServerBinaries } from './temporal-server-binaries';
import { makeTempDir, readLogTail, spawnLogged, terminate, waitReady } from './child-processes';
import type { Running } from './child-processes';
import { findPostgresBinDir, postgresUser } from './postgres-binaries';
import { readPostgresSettings } from './postgres-settings';
import type { OsUser } from './postgres-binaries';
import { repoRoot } from './repo-root';
import type { TemporalServerHandle } from './server-handle';

const run = promisify(execFile);

/** Local-only credentials: the cluster listens on 127.0.0.1 and trusts its local connections. */
const DB_USER = 'temporal';
const DB_PASSWORD = 'temporal';
/** The refunds ledger's database and login, created by deploy/setup-postgres.sh as in compose; the retail store's too. */
export const LEDGER = { database: 'agent_refunds', user: 'agent_refunds', password: 'agent_refunds' } as const;

/** The URL a worker sets as AGENT_REFUNDS_DATABASE_URL (and AGENT_RETAIL_DATABASE_URL) to use this cluster's ledger. */
export function ledgerUrl(pgPort: number): string {
  return `postgres://${LEDGER.user}:${LEDGER.password}@127.0.0.1:${pgPort}/${LEDGER.database}`;
}
const READY_TIMEOUT_MS = 120_000;

export interface PostgresServerOptions {
  /** Folder for the PostgreSQL data and the logs; kept between starts. Default: a temporary folder. */
  dir?: string;
  /** gRPC port of the frontend (default: a free port). */
  port?: number;
  /** PostgreSQL's port (default: a free port). */
  postgresPort?: number;
  namespace?: string;
  binaries?: TemporalServerBinaries;
  log?: (line: string) => void;
  /**
   * A folder laid out like the repository's deploy/ (deploy/temporal/production.yaml,
   * deploy/dynamicconfig/production.yaml, deploy/postgres/postgresql.conf): another configuration to compare, as
   * the benchmark's `--deploy-dir` does. Default: the repository's deploy/.
   */
  deployDir?: string;
  /** Extra PostgreSQL settings (`name=value`), after the deploy folder's. */
  postgresSettings?: string[];
}

export interface PostgresCluster {
  port: number;
  dataDir: string;
  logFile: string;
  readonly pid: number;
  /**
   * Stops PostgreSQL and starts it again on the same data. `fast` is an orderly restart (open
   * connections are cut); `crash` is SIGKILL of the postmaster, recovered from the WAL on start.
   */
  restart(mode?: 'fast' | 'crash'): Promise<void>;
  stop(): Promise<void>;
}

export interface PostgresTemporalServer extends TemporalServerHandle {
  kind: 'postgres';
  version: string;
  postgres: PostgresCluster;
  /** The server's Prometheus endpoint (http://127.0.0.1:PORT/metrics). */
  metricsUrl: string;
  /** The refunds ledger in that PostgreSQL (AGENT_REFUNDS_DATABASE_URL for the workers). */
  ledgerUrl: string;
  /** The server, then PostgreSQL. */
  stopAll(): Promise<void>;
}

/** A PostgreSQL cluster of its own in `dir` (initdb on first use), trusting local connections as user `temporal`. */
export async function startPostgres(
  dir: string,
  requestedPort: number | undefined,
  settings: string[],
  log: (l: string) => void,
): Promise<PostgresCluster> {
  const bin = findPostgresBinDir();
  const user: OsUser | undefined = postgresUser();
  const dataDir = path.join(dir, 'pgdata');
  const logFile = path.join(dir, 'postgres.log');
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  if (user) assertReachableBy(user, dir);
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (user) fs.chownSync(dataDir, user.uid, user.gid);
    log(`postgres: initdb ${dataDir}`);
    await run(
      path.join(bin, 'initdb'),
      ['-D', dataDir, '-U', DB_USER, '--auth=trust', '--encoding=UTF8', '--locale=C'],
      { ...asUser, timeout: 120_000 },
    ).catch((err: Error & { stderr?: string }) => {
      throw new Error(`initdb ${dataDir} failed: ${err.stderr?.trim() || err.message}`);
    });
  }
  const port = requestedPort ?? (await freePort());
  if (!(await isPortFree(port))) throw new Error(`PostgreSQL port ${port} on 127.0.0.1 is already in use`);
  const args = [
    '-D',
    dataDir,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${dataDir}`,
    // deploy/postgres/postgresql.conf's (max_connections & co.), then the caller's.
    ...settings.flatMap((kv) => ['-c', kv]),
  ];
  let proc: Running | undefined;
  const ready = async (): Promise<boolean> =>
    run(path.join(bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)], { timeout: 5_000 }).then(
      () => true,
      () => false,
    );
  const start = async (attempts = 1): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      proc = spawnLogged(path.join(bin, 'postgres'), args, logFile, asUser);
      try {
        return await waitReady(proc, `PostgreSQL on 127.0.0.1:${port}`, ready, logFile, READY_TIMEOUT_MS);
      } catch (err) {
        // After a crash the old backends hold the shared memory until they notice and exit.
        if (attempt >= attempts) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  await start();
  log(`postgres: ready on 127.0.0.1:${port} (data ${dataDir}, log ${logFile})`);
  return {
    port,
    dataDir,
    logFile,
    get pid() {
      return proc?.child.pid ?? -1;
    },
    async restart(mode = 'fast') {
      // SIGINT is PostgreSQL's fast shutdown; SIGKILL of the postmaster is a crash.
      await terminate(proc, mode === 'crash' ? 'SIGKILL' : 'SIGINT', 30_000);
      await start(mode === 'crash' ? 30 : 1);
    },
    stop: () => terminate(proc, 'SIGINT', 30_000),
  };
}

/** PostgreSQL runs as another user here: every folder above its data must let that user through. */
function assertReachableBy(user: OsUser, dir: string): void {
  for (let d = dir; ; d = path.dirname(d)) {
    const st = fs.statSync(d);
    const searchable = st.uid === user.uid ? st.mode & 0o100 : st.gid === user.gid ? st.mode & 0o010 : st.mode & 0o001;
    if (!searchable) {
      throw new Error(
        `PostgreSQL runs as user postgres, which cannot enter ${d} (mode ${(st.mode & 0o777).toString(8)}): choose a folder it can reach, or chmod o+x ${d}`,
      );
    }
    if (path.dirname(d) === d) return;
  }
}

async function setUpSchemas(sqlTool: string, pgPort: number, logFile: string): Promise<void> {
  const script = path.join(repoRoot(), 'deploy', 'setup-postgres.sh');
  const proc = spawnLogged('sh', [script], logFile, {
    env: {
      // psql from the cluster's own programs when it is not on PATH.
      PATH: `${process.env.PATH ?? ''}${path.delimiter}${findPostgresBinDir()}`,
      LEDGER_DB: LEDGER.database,
      LEDGER_USER: LEDGER.user,
      LEDGER_PASSWORD: LEDGER.password,
      POSTGRES_SEEDS: '127.0.0.1',
      DB_PORT: String(pgPort),
      POSTGRES_USER: DB_USER,
      SQL_PASSWORD: DB_PASSWORD,
      SQL_TOOL: sqlTool,
    },
  });
  const { code, signal } = await proc.exit;
  if (code !== 0) {
    throw new Error(
      `deploy/setup-postgres.sh failed (${signal ?? `exit ${code}`}; log ${logFile}):\n${readLogTail(logFile, proc.logOffset)}`,
    );
  }
}

/** Every port the four services listen on, free right now. */
async function serverPorts(frontend: number | undefined): Promise<Record<string, string>> {
  const names = [
    'FRONTEND_MEMBERSHIP_PORT',
    'FRONTEND_HTTP_PORT',
    'MATCHING_GRPC_PORT',
    'MATCHING_MEMBERSHIP_PORT',
    'HISTORY_GRPC_PORT',
    'HISTORY_MEMBERSHIP_PORT',
    'WORKER_GRPC_PORT',
    'WORKER_MEMBERSHIP_PORT',
    'METRICS_PORT',
  ];
  const taken: number[] = [];
  const grpc = frontend ?? (await freePort());
  taken.push(grpc);
  const out: Record<string, string> = { FRONTEND_GRPC_PORT: String(grpc) };
  for (const name of names) {
    const p = await freePort(taken);
    taken.push(p);
    out[name] = String(p);
  }
  return out;
}

/** PostgreSQL + schemas + the Temporal server + the namespace and the agent's search attributes. */
export async function startPostgresServer(opts: PostgresServerOptions = {}): Promise<PostgresTemporalServer> {
  const log = opts.log ?? (() => undefined);
  const namespace = opts.namespace ?? 'default';
  const dir = opts.dir ? path.resolve(opts.dir) : makeTempDir('temporal-postgres-');
  fs.mkdirSync(dir, { recursive: true });
  // PostgreSQL runs as its own user, which must be able to reach its data folder inside ours.
  fs.chmodSync(dir, 0o755);
  const binaries = opts.binaries ?? (await findOrBuildTemporalServer(log));
  const deployDir = path.resolve(opts.deployDir ?? path.join(repoRoot(), 'deploy'));
  const settings = [
    ...readPostgresSettings(path.join(deployDir, 'postgres', 'postgresql.conf')),
    ...(opts.postgresSettings ?? []),
  ];

  const postgres = await startPostgres(dir, opts.postgresPort, settings, log);
  const logFile = path.join(dir, 'temporal-server.log');
  try {
    log('temporal-server: setting up the schemas with deploy/setup-postgres.sh');
    await setUpSchemas(binaries.sqlTool, postgres.port, logFile);

    if (opts.port !== undefined && !(await isPortFree(opts.port)))
      throw new Error(`port ${opts.port} on 127.0.0.1 is already in use`);
    const ports = await serverPorts(opts.port);
    const address = `127.0.0.1:${ports.FRONTEND_GRPC_PORT}`;
    // The server reads TEMPORAL_ROOT, TEMPORAL_ENVIRONMENT & co.: keep the caller's TEMPORAL_* away from it.
    const env: NodeJS.ProcessEnv = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_'))),
      ...ports,
      POSTGRES_SEEDS: '127.0.0.1',
      DB_PORT: String(postgres.port),
      POSTGRES_USER: DB_USER,
      POSTGRES_PWD: DB_PASSWORD,
      BIND_ON_IP: '127.0.0.1',
      TEMPORAL_BROADCAST_ADDRESS: '127.0.0.1',
      PROMETHEUS_ENDPOINT: `127.0.0.1:${ports.METRICS_PORT}`,
      DYNAMIC_CONFIG_FILE_PATH: path.join(deployDir, 'dynamicconfig', 'production.yaml'),
    };
    const args = ['--root', '/', '--config', path.join(deployDir, 'temporal'), '--env', 'production'];
    args.push('--allow-no-auth', 'start');

    let proc: Running | undefined;
    const start = async (): Promise<void> => {
      proc = spawnLogged(binaries.server, args, logFile, { env });
      await waitReady(
        proc,
        `Temporal server ${binaries.version} at ${address}`,
        () => isServerReachable(address, 'temporal-system'),
        logFile,
        READY_TIMEOUT_MS,
      );
    };
    await start();
    const connection = await Connection.connect({ address });
    try {
      await initNamespace(connection, namespace, log);
    } finally {
      await connection.close();
    }
    log(`temporal-server: ${binaries.version} ready at ${address}, namespace ${namespace} (log ${logFile})`);

    const stop = (): Promise<void> => terminate(proc, 'SIGTERM', 20_000);
    return {
      kind: 'postgres',
      version: binaries.version,
      address,
      namespace,
      logFile,
      uiUrl: undefined,
      postgres,
      metricsUrl: `http://127.0.0.1:${ports.METRICS_PORT}/metrics`,
      ledgerUrl: ledgerUrl(postgres.port),
      get pid() {
        return proc?.child.pid ?? -1;
      },
      stop,
      kill: () => terminate(proc, 'SIGKILL'),
      async restart() {
        await stop();
        await start();
      },
      exited: async () => {
        if (!proc) throw new Error('Temporal server was never started');
        return proc.exit;
      },
      async stopAll() {
        await stop();
        await postgres.stop();
      },
    };
  } catch (err) {
    await postgres.stop();
    throw err;
  }
}
