// Real worker processes for tests, the eval and the benchmark: `node dist/worker/main.js` (or the
// eval's worker) with a test's environment, which a test can crash (SIGKILL), hang (SIGSTOP) or
// stop gracefully.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { hostname } from 'node:os';
import * as path from 'node:path';
import type { TemporalEnv } from '../runtime/temporal-env';
import { repoRoot } from './repo-root';

export interface WorkerProcess {
  proc: ChildProcess;
  /** The identity the SDK reports for this worker (`<pid>@<host>`), as in history events and pending activities. */
  identity: string;
  /** Resolves when the worker has said it is ready. */
  ready: Promise<void>;
  output(): string;
  /** SIGKILL: the crash a test wants to survive. Resolves when the process is gone (a hung one too). */
  kill(): Promise<void>;
  /** SIGTERM: graceful shutdown. */
  stop(): Promise<void>;
  /** SIGSTOP: a hung worker. Its sockets stay open, so the server still hands it tasks it will never answer. */
  hang(): void;
  /** SIGCONT: the hung worker wakes up where it stopped. */
  resume(): void;
}

// Worker processes must never outlive the test process: a SIGSTOPped orphan would sit in the
// process table (and on the task queue) forever. SIGKILL ends stopped processes too.
const liveWorkers = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of liveWorkers) proc.kill('SIGKILL');
});

/**
 * Starts `node dist/worker/main.js`, the same entry point `npm run worker` runs, or another worker
 * entry under dist/ (the eval's: `eval/worker.js`).
 */
export function startWorkerProcess(
  env: TemporalEnv,
  extraEnv: Record<string, string>,
  entry = 'worker/main.js',
): WorkerProcess {
  const proc = spawn(process.execPath, [path.join(repoRoot(), 'dist', entry)], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
      OPENAI_API_KEY: 'test-key',
      // Many workers share this machine during a test run: each takes any free metrics port.
      AGENT_METRICS_PORT: '0',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  liveWorkers.add(proc);
  let log = '';
  const exited = new Promise<void>((resolve) =>
    proc.once('exit', () => {
      liveWorkers.delete(proc);
      resolve();
    }),
  );
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      // The SDK's event, in either LOG_FORMAT: `... state=RUNNING` or `..."state":"RUNNING"...`.
      if (/Worker state changed\b.*\bstate(=|":")RUNNING\b/.test(log)) resolve();
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`worker exited with ${code} before it was ready:\n${log}`)));
  });
  ready.catch(() => undefined); // observed by callers that await it
  const end = async (signal: NodeJS.Signals) => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await exited;
  };
  const signal = (sig: NodeJS.Signals) => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(sig);
  };
  return {
    proc,
    identity: `${proc.pid}@${hostname()}`,
    ready,
    output: () => log,
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
    hang: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
  };
}

/**
 * The workers one test file starts. killAll() in after() ends every one of them, hung (SIGSTOP)
 * or not, whether or not the tests passed.
 */
export class WorkerFleet {
  private readonly all: WorkerProcess[] = [];

  start(env: TemporalEnv, extraEnv: Record<string, string>): WorkerProcess {
    const worker = startWorkerProcess(env, extraEnv);
    this.all.push(worker);
    return worker;
  }

  async killAll(): Promise<void> {
    await Promise.all(this.all.map((w) => w.kill()));
  }
}
