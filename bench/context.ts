// What every phase works with: the server, the scripted LLM, the client, and the bench workers it forks.
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { TemporalEnv } from '../runtime/temporal-env';
import type { AgentInput } from '../common/types';
import type { TemporalServerHandle } from '../local-servers/server-handle';
import type { ScriptedLlmServer } from '../offline-model/scripted-llm-server';
import { benchInput } from './scenario';
import type { ScenarioOptions } from './scenario';
import type { WorkerStats } from './stats';
import type { Options } from './options';
import { children, DIST, progress } from './process';

export interface BenchWorker {
  proc: ChildProcess;
  readyAt: Promise<number>;
  spawnedAt: number;
  stats(): Promise<WorkerStats>;
  /** SIGKILL, resolves when the process is gone */
  kill(): Promise<void>;
  /** graceful shutdown (SIGKILL after 15 s) */
  stop(): Promise<void>;
}

export interface Ctx {
  opts: Options;
  server: TemporalServerHandle;
  llm: ScriptedLlmServer;
  client: Client;
  scenarios: Map<string, ScenarioOptions>;
  logDir: string;
  workerCount: number;
}

export function startWorker(
  ctx: Ctx,
  taskQueue: string,
  what: string,
  extraEnv: Record<string, string> = {},
  /** Another build's dist/ (the floor phase's agent before a change); default: this one. */
  dist = DIST,
): BenchWorker {
  const n = ++ctx.workerCount;
  const logFile = path.join(ctx.logDir, `worker-${n}-${what}.log`);
  const fd = fs.openSync(logFile, 'a');
  const spawnedAt = Date.now();
  const proc = fork(path.join(dist, 'bench', 'worker.js'), [], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: ctx.server.address,
      TEMPORAL_NAMESPACE: ctx.server.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      OPENAI_BASE_URL: ctx.llm.baseUrl,
      OPENAI_API_KEY: 'bench',
      OPENAI_TIMEOUT_SECONDS: '120',
      BENCH_WORKER_OVERRIDES: JSON.stringify(ctx.opts.workerOverrides),
      ...(ctx.opts.codec ? { BENCH_DATA_CONVERTER: ctx.opts.codec } : {}),
      ...(ctx.opts.metrics ? {} : { BENCH_WORKER_METRICS: 'off' }),
      ...extraEnv,
    },
    stdio: ['ignore', fd, fd, 'ipc'],
    execArgv: [...process.execArgv, ...ctx.opts.workerNodeArgs],
  });
  fs.closeSync(fd);
  children.add(proc);
  const exited = new Promise<void>((resolve) =>
    proc.once('exit', () => {
      children.delete(proc);
      resolve();
    }),
  );
  const readyAt = new Promise<number>((resolve, reject) => {
    proc.on('message', (m: { type?: string; at?: number }) => {
      if (m?.type === 'ready') resolve(Date.now());
    });
    void exited.then(() => reject(new Error(`bench worker ${n} exited before it was ready (log: ${logFile})`)));
  });
  readyAt.catch(() => undefined);
  const pending: Array<(s: WorkerStats) => void> = [];
  proc.on('message', (m: WorkerStats) => {
    if (m?.type === 'stats') pending.shift()?.(m);
  });
  const alive = () => proc.exitCode === null && proc.signalCode === null;
  let expectExit = false;
  void exited.then(() => {
    if (!expectExit)
      progress(
        `worker ${n} (${what}) exited unexpectedly (code ${proc.exitCode}, signal ${proc.signalCode}); log: ${logFile}`,
      );
  });
  return {
    proc,
    readyAt,
    spawnedAt,
    stats: () =>
      new Promise<WorkerStats>((resolve, reject) => {
        if (!alive()) return reject(new Error('worker is not running'));
        pending.push(resolve);
        proc.send({ type: 'stats' });
      }),
    kill: async () => {
      expectExit = true;
      if (alive()) proc.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      expectExit = true;
      if (alive()) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export function envFor(ctx: Ctx, taskQueue: string): TemporalEnv {
  return { address: ctx.server.address, namespace: ctx.server.namespace, taskQueue, uiUrl: ctx.server.uiUrl ?? '' };
}

/** A bench run's input; --no-search-attributes asks startRun not to have the workflow upsert them. */
export function runInput(ctx: Ctx, steps: number, extra: Partial<AgentInput> = {}): AgentInput {
  return benchInput(steps, { ...(ctx.opts.searchAttributes ? {} : { search_attributes: false }), ...extra });
}

let idCounter = 0;
export function newId(phase: string): string {
  return `bench-${phase}-${process.pid}-${++idCounter}`;
}
