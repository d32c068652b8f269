import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { devServerSearchAttributeFlags } from '../common/search-attributes';
import { freePort, isPortFree } from './free-port';
import { findOrBuildTemporalCli } from './temporal-cli';

/** Dynamic config for local runs: new search attributes visible at once, update-with-start allowed. */
const DYNAMIC_CONFIG: Record<string, string> = {
  'system.forceSearchAttributesCacheRefreshOnRead': 'true',
  'frontend.enableUpdateWorkflowExecution': 'true',
  'frontend.enableUpdateWorkflowExecutionAsyncAccepted': 'true',
  'frontend.enableExecuteMultiOperation': 'true',
  // The worker gets the activity a workflow task schedules in the reply to that task, instead of
  // through a task-queue round trip: less latency and server work per step (docs/benchmark.md).
  'system.enableActivityEagerExecution': 'true',
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

export interface DevServer {
  /** host:port of the frontend gRPC service */
  address: string;
  /** http://IP:UIPORT */
  uiUrl: string;
  namespace: string;
  dbFile: string;
  logFile: string;
  port: number;
  uiPort: number;
  cliPath: string;
  /** pid of the current server process (changes after restart) */
  readonly pid: number;
  /** SIGTERM, wait for exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
  /** SIGKILL, wait for exit (simulates a crash). */
  kill(): Promise<void>;
  /** Start again on the same ports and db file (stopping first if still running), wait until healthy. */
  restart(): Promise<void>;
  /** Resolves when the current server process exits, with its exit code or signal. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

// ---- make sure children never outlive a normally exiting parent -------------------------------

const liveChildren = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let exitHookInstalled = false;

function killAllSync(): void {
  // Must be synchronous (runs in 'exit'): SIGKILL is the only thing guaranteed to finish in time.
  for (const child of liveChildren) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
  if (process.env.TEMPORAL_KEEP_DEV_DB) return;
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', killAllSync);
  // A signal's default action skips 'exit' handlers (e.g. node --test killing a timed-out file).
  // When nobody else handles the signal, clean up and re-raise it so the default behaviour stays.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      if (process.listenerCount(sig) > 1) return; // the host handles it and will exit normally
      killAllSync();
      process.removeListener(sig, onSignal);
      process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
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

function readLogTail(logFile: string, fromOffset: number, lines = 30): string {
  try {
    const text = fs.readFileSync(logFile).subarray(fromOffset).toString('utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log output)';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---- start / stop --------------------------------------------------------------------------

interface Running {
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  logOffset: number;
}

function spawnServer(cliPath: string, args: string[], logFile: string): Running {
  const logOffset = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
  fs.appendFileSync(logFile, `\n--- ${new Date().toISOString()} ${cliPath} ${args.join(' ')}\n`);
  const fd = fs.openSync(logFile, 'a');
  // The CLI reads TEMPORAL_ADDRESS & co. as client settings; keep the test runner's values away from it.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_')));
  let child: ChildProcess;
  try {
    child = spawn(cliPath, args, { stdio: ['ignore', fd, fd], env });
  } finally {
    fs.closeSync(fd); // the child holds its own copy
  }
  installExitHook();
  liveChildren.add(child);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      liveChildren.delete(child);
      resolve({ code, signal });
    });
    child.once('error', (err) => {
      liveChildren.delete(child);
      fs.appendFileSync(logFile, `spawn error: ${err.message}\n`);
      resolve({ code: -1, signal: null });
    });
  });
  return { child, exit, logOffset };
}

async function waitHealthy(run: Running, address: string, namespace: string, logFile: string): Promise<void> {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void run.exit.then((e) => (exited = e));
  for (;;) {
    if (exited) {
      const how = exited.signal ? `signal ${exited.signal}` : `code ${exited.code}`;
      throw new Error(
        `temporal dev server exited with ${how} before becoming healthy (log: ${logFile}):\n${readLogTail(logFile, run.logOffset)}`,
      );
    }
    if (await isServerReachable(address, namespace)) return;
    if (Date.now() > deadline) {
      run.child.kill('SIGKILL');
      await run.exit;
      throw new Error(
        `temporal dev server at ${address} not healthy after ${HEALTH_TIMEOUT_MS / 1000} s (log: ${logFile}):\n${readLogTail(logFile, run.logOffset)}`,
      );
    }
    await sleep(200);
  }
}

async function terminate(run: Running | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!run || run.child.exitCode !== null || run.child.signalCode !== null) return;
  run.child.kill(signal);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), STOP_GRACE_MS);
  await run.exit;
  clearTimeout(timer);
}

/** Start `temporal server start-dev` with a SQLite file and the agent search attributes; resolves once healthy. */
export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  const cliPath = opts.cliPath ?? (await findOrBuildTemporalCli());
  const ip = opts.ip ?? '127.0.0.1';
  const namespace = opts.namespace ?? 'default';

  for (const [what, p] of [
    ['port', opts.port],
    ['uiPort', opts.uiPort],
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
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-dev-'));
    tempDirs.add(dir); // removed at process exit; set TEMPORAL_KEEP_DEV_DB=1 to keep it
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
    '--db-filename',
    dbFile,
    '--namespace',
    namespace,
    '--log-level',
    'warn',
    ...devServerSearchAttributeFlags(),
    ...Object.entries(DYNAMIC_CONFIG).flatMap(([k, v]) => ['--dynamic-config-value', `${k}=${v}`]),
    ...(opts.codecEndpoint ? ['--ui-codec-endpoint', opts.codecEndpoint] : []),
    ...SQLITE_PRAGMAS.flatMap((p) => ['--sqlite-pragma', p]),
    ...(opts.extraArgs ?? []),
  ];
  const address = `${ip}:${port}`;

  let run: Running | undefined;
  const start = async (): Promise<void> => {
    run = spawnServer(cliPath, args, logFile);
    await waitHealthy(run, address, namespace, logFile);
  };
  await start();

  return {
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
    stop: () => terminate(run, 'SIGTERM'),
    kill: () => terminate(run, 'SIGKILL'),
    async restart(): Promise<void> {
      await terminate(run, 'SIGTERM');
      await start();
    },
    exited: async () => {
      if (!run) throw new Error('dev server was never started');
      return run.exit;
    },
  };
}
