import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { devServerSearchAttributeFlags } from '../common/temporal/search-attributes';
import { freePort, isPortFree } from './free-port';
import { findOrBuildTemporalCli } from './temporal-cli';
import { makeTempDir, spawnLogged, terminate, waitReady } from './child-processes';
import type { Running } from './child-processes';
import type { TemporalServerHandle } from './server-handle';

/** Per history shard; the same value as deploy/dynamicconfig/production.yaml's. */
export const TRANSFER_QUEUE_POLLS_PER_SECOND = 1000;

/** Dynamic config for local runs: new search attributes visible at once, update-with-start allowed. */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, string>> = {
  'system.forceSearchAttributesCacheRefreshOnRead': 'true',
  'frontend.enableUpdateWorkflowExecution': 'true',
  'frontend.enableUpdateWorkflowExecutionAsyncAccepted': 'true',
  'frontend.enableExecuteMultiOperation': 'true',
  // The worker gets the activity a workflow task schedules in the reply to that task, instead of
  // through a task-queue round trip: less latency and server work per step (docs/benchmark.md).
  'system.enableActivityEagerExecution': 'true',
  // The workflow task that follows a finished activity reaches matching through the history
  // service's transfer queue, whose reader is rate-limited per shard (20 loads/s by default). A run
  // loads it once per step: after a one-second burst every step waited ~30 ms for that limiter,
  // half an agent step at 0 ms LLM latency (docs/benchmark.md#the-transfer-queues-poll-limit).
  'history.transferProcessorMaxPollRPS': String(TRANSFER_QUEUE_POLLS_PER_SECOND),
};

/**
 * SQLite in WAL mode with synchronous=NORMAL: a commit no longer waits for several fsyncs, which
 * was most of a step's server time (docs/benchmark.md). Still safe against a crash of the server
 * process (the restart test kills it); a power cut may lose the last commits, fine for a dev server.
 */
const SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

const HEALTH_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;

export interface DevServerOptions {
  port?: number;
  uiPort?: number;
  /** The HTTP API's and the /metrics endpoint's ports; unset or 0: the CLI picks free ones. */
  httpPort?: number;
  metricsPort?: number;
  dbFile?: string;
  namespace?: string;
  ip?: string;
  extraArgs?: string[];
  /** Browser-facing URL of the codec server (`--ui-codec-endpoint`): the Web UI decodes payloads through it. */
  codecEndpoint?: string;
  logFile?: string;
  /** Skip discovery and use this CLI binary. */
  cliPath?: string;
}

export interface DevServer extends TemporalServerHandle {
  kind: 'dev';
  /** http://IP:UIPORT */
  uiUrl: string;
  dbFile: string;
  port: number;
  uiPort: number;
  cliPath: string;
}

// ---- health --------------------------------------------------------------------------------

/** Plain TCP connect: a refused port fails in microseconds, whereas gRPC waits for its connect timeout. */
function tcpOpen(address: string, timeoutMs = 1_000): Promise<boolean> {
  const sep = address.lastIndexOf(':');
  const host = sep > 0 ? address.slice(0, sep).replace(/^\[(.*)\]$/, '$1') : address;
  const port = Number(address.slice(sep + 1));
  if (sep <= 0 || !Number.isInteger(port)) return Promise.resolve(true); // let gRPC judge odd addresses
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: timeoutMs });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/** True if a Temporal frontend answers at address and knows the namespace (quick: ~5 s max). */
export async function isServerReachable(address: string, namespace = 'default'): Promise<boolean> {
  if (!(await tcpOpen(address))) return false;
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 2_000 });
    const conn = connection;
    await conn.withDeadline(Date.now() + 3_000, () => conn.workflowService.describeNamespace({ namespace }));
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

// ---- start / stop --------------------------------------------------------------------------

function spawnServer(cliPath: string, args: string[], logFile: string): Running {
  // The CLI reads TEMPORAL_ADDRESS & co. as client settings; keep the test runner's values away from it.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_')));
  return spawnLogged(cliPath, args, logFile, { env });
}

/** Start `temporal server start-dev` with a SQLite file and the agent search attributes; resolves once healthy. */
export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  const cliPath = opts.cliPath ?? (await findOrBuildTemporalCli());
  const ip = opts.ip ?? '127.0.0.1';
  const namespace = opts.namespace ?? 'default';

  for (const [what, p] of [
    ['port', opts.port],
    ['uiPort', opts.uiPort],
    ['httpPort', opts.httpPort || undefined],
    ['metricsPort', opts.metricsPort || undefined],
  ] as const) {
    // Otherwise the health check could succeed against whoever already owns the port.
    if (p !== undefined && !(await isPortFree(p, ip)))
      throw new Error(`startDevServer: ${what} ${p} on ${ip} is already in use`);
  }
  const port = opts.port ?? (await freePort());
  let uiPort = opts.uiPort ?? (await freePort());
  while (uiPort === port) uiPort = await freePort();

  let dbFile: string;
  if (opts.dbFile) {
    dbFile = path.resolve(opts.dbFile);
    fs.mkdirSync(path.dirname(dbFile), { recursive: true });
  } else {
    const dir = makeTempDir('temporal-dev-'); // removed at process exit; TEMPORAL_KEEP_DEV_DB=1 keeps it
    dbFile = path.join(dir, 'temporal.sqlite');
  }
  const logFile = path.resolve(
    opts.logFile ?? path.join(path.dirname(dbFile), `${path.basename(dbFile, path.extname(dbFile))}.log`),
  );
  fs.mkdirSync(path.dirname(logFile), { recursive: true });

  const args = [
    'server',
    'start-dev',
    '--ip',
    ip,
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    ...(opts.httpPort ? ['--http-port', String(opts.httpPort)] : []),
    ...(opts.metricsPort ? ['--metrics-port', String(opts.metricsPort)] : []),
    '--db-filename',
    dbFile,
    '--namespace',
    namespace,
    '--log-level',
    'warn',
    ...devServerSearchAttributeFlags(),
    ...Object.entries(DEV_SERVER_DYNAMIC_CONFIG).flatMap(([k, v]) => ['--dynamic-config-value', `${k}=${v}`]),
    ...(opts.codecEndpoint ? ['--ui-codec-endpoint', opts.codecEndpoint] : []),
    ...SQLITE_PRAGMAS.flatMap((p) => ['--sqlite-pragma', p]),
    ...(opts.extraArgs ?? []),
  ];
  const address = `${ip}:${port}`;

  let run: Running | undefined;
  const start = async (): Promise<void> => {
    run = spawnServer(cliPath, args, logFile);
    await waitReady(
      run,
      `temporal dev server at ${address}`,
      () => isServerReachable(address, namespace),
      logFile,
      HEALTH_TIMEOUT_MS,
    );
  };
  await start();

  return {
    kind: 'dev',
    address,
    uiUrl: `http://${ip}:${uiPort}`,
    namespace,
    dbFile,
    logFile,
    port,
    uiPort,
    cliPath,
    get pid(): number {
      return run?.child.pid ?? -1;
    },
    stop: () => terminate(run, 'SIGTERM', STOP_GRACE_MS),
    kill: () => terminate(run, 'SIGKILL', STOP_GRACE_MS),
    async restart(): Promise<void> {
      await terminate(run, 'SIGTERM', STOP_GRACE_MS);
      await start();
    },
    exited: async () => {
      if (!run) throw new Error('dev server was never started');
      return run.exit;
    },
  };
}
