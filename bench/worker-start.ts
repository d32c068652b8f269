// A worker's cold start: from spawning `node dist/worker/main.js` (what `npm start` runs) until the
// server sees it polling: its identity among the workflow pollers of its task queue
// (describeTaskQueue). Each run is a new process on a task queue of its own, stopped once it polls.
// The benchmark (bench/main.ts) prints it; alone:
//   node dist/bench/worker-start.js [--runs N] [--entry other/dist/worker/main.js]   (TEMPORAL_ADDRESS: a running server)
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { temporalEnv } from '../runtime/temporal-env';
import { median, procCpuMs, summarize } from './stats';
import type { Summary } from './stats';

export const WORKER_ENTRY = path.resolve(__dirname, '..', 'worker', 'main.js');
const PREBUILT_LINE = 'workflow code from the prebuilt bundle';
const GIVE_UP_MS = 60_000;

export interface WorkerStartOptions {
  connection: Connection;
  namespace: string;
  /** How many processes to time, one after the other (default 5). */
  runs?: number;
  /** The workers' environment (default: this process's); TEMPORAL_TASK_QUEUE is set per run. */
  env?: NodeJS.ProcessEnv;
  /** The worker's entry file (default: this build's dist/worker/main.js; another build's, for a before/after). */
  entry?: string;
}

export interface WorkerStartResult {
  /** Median ms from spawn to the worker's first poll, as the server reports it. */
  medianMs: number;
  summary: Summary;
  samplesMs: number[];
  /** CPU time (user + system, all threads) each worker had used when it was first seen polling: less load-dependent than wall time. */
  cpuMs: Summary;
  /** Whether every worker said it loaded the prebuilt workflow bundle (else it bundled at start). */
  prebuilt: boolean;
}

export async function measureWorkerStart(opts: WorkerStartOptions): Promise<WorkerStartResult> {
  const samplesMs: number[] = [];
  const cpuMs: number[] = [];
  let prebuilt = true;
  for (let i = 0; i < (opts.runs ?? 5); i++) {
    const run = await timeOnce(opts, `worker-start-${process.pid}-${Date.now()}-${i}`);
    samplesMs.push(run.ms);
    cpuMs.push(run.cpuMs);
    prebuilt &&= run.log.includes(PREBUILT_LINE);
  }
  return { medianMs: median(samplesMs), summary: summarize(samplesMs), samplesMs, cpuMs: summarize(cpuMs), prebuilt };
}

async function timeOnce(
  opts: WorkerStartOptions,
  taskQueue: string,
): Promise<{ ms: number; cpuMs: number; log: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [opts.entry ?? WORKER_ENTRY], {
    // Any free metrics port: a worker of the benchmark may still be listening on the default one.
    env: { ...(opts.env ?? process.env), TEMPORAL_TASK_QUEUE: taskQueue, AGENT_METRICS_PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const identity = `${child.pid}@${hostname()}`;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`worker exited (${child.exitCode ?? child.signalCode}) before polling: ${log.trim()}`);
      }
      if (performance.now() - started > GIVE_UP_MS) throw new Error(`worker not polling after ${GIVE_UP_MS} ms`);
      const { pollers } = await opts.connection.workflowService.describeTaskQueue({
        namespace: opts.namespace,
        taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      if ((pollers ?? []).some((p) => p.identity === identity)) {
        return { ms: performance.now() - started, cpuMs: procCpuMs(child.pid!), log };
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  }
}

if (require.main === module) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, entry: { type: 'string' } } });
  const env = temporalEnv();
  Connection.connect({ address: env.address })
    .then(async (connection) => {
      try {
        return await measureWorkerStart({
          connection,
          namespace: env.namespace,
          runs: Number(values.runs),
          ...(values.entry ? { entry: path.resolve(values.entry) } : {}),
        });
      } finally {
        await connection.close();
      }
    })
    .then(
      (r) =>
        console.log(
          `worker start to first poll: median ${r.medianMs.toFixed(0)} ms over ${r.samplesMs.length} runs ` +
            `(${r.samplesMs.map((s) => s.toFixed(0)).join(', ')} ms); CPU used by then: median ${r.cpuMs.median.toFixed(0)} ms` +
            (r.prebuilt ? '' : '; NOT from the prebuilt bundle'),
        ),
      (err: unknown) => {
        console.error(`bench-worker-start: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
}
