// Shared test plumbing: the real dev server started by `npm test` (scripts/test.ts passes its
// address in the environment), real worker processes, and a Temporal client.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { createClient } from '../../client/connect';
import { temporalEnv } from '../../runtime/temporal-env';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { DEFAULT_ALLOWED_TOOLS } from '../../domains/wired';
import type { AgentInput, AgentResult } from '../../common/types';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
export const DIST = path.join(REPO_ROOT, 'dist');

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export function testEnv(taskQueue: string, overrides: Partial<TemporalEnv> = {}): TemporalEnv {
  if (!process.env.TEMPORAL_ADDRESS) {
    throw new Error('TEMPORAL_ADDRESS is not set: run the suite with `npm test`, which starts a dev server');
  }
  return { ...temporalEnv(), taskQueue, ...overrides };
}

/** A client like the CLI's: it encrypts and decrypts payloads when codecEnv configures a key. */
export async function connectClient(env: TemporalEnv, codecEnv: NodeJS.ProcessEnv = process.env): Promise<Client> {
  return createClient(env, codecEnv);
}

export const REFUND_GOAL =
  'User 42 asked: Can I get a refund now? Use tools to verify profile, billing state, and policy. ' +
  'Return a short final answer in English with USD amount and reason.';

/** A result's trace as [step, tool, ok] rows. */
export const traceRows = (result: AgentResult): Array<[number, string, boolean]> =>
  result.trace.map((t) => [t.step, t.tool, t.ok]);

/** The seeds' refund scenario in traceRows(): profile, billing, policy, each read once and ok. */
export const REFUND_SCENARIO_ROWS: Array<[number, string, boolean]> = [
  [1, 'get_user_profile', true],
  [2, 'get_user_billing', true],
  [3, 'search_policy', true],
];

export function agentInput(overrides: Partial<AgentInput> = {}): AgentInput {
  return { goal: REFUND_GOAL, principal: '42', allow: [...DEFAULT_ALLOWED_TOOLS], ...overrides };
}

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

/** Starts `node dist/worker/main.js`: the same entry point `npm run worker` runs. */
export function startWorkerProcess(env: TemporalEnv, extraEnv: Record<string, string>): WorkerProcess {
  const proc = spawn(process.execPath, [path.join(DIST, 'worker', 'main.js')], {
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
      if (log.includes("state: 'RUNNING'")) resolve();
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

/** Polls until `check` returns a value (not undefined); fails with `what` after the timeout. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
}
