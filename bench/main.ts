// `npm run bench [-- --quick] [flags]`: what durability costs per step, how far one worker scales,
// how fast a run recovers. Starts its own Temporal dev server (fresh SQLite file, free ports), a
// scripted OpenAI-compatible LLM server in this process, worker processes (bench/worker.ts:
// the shipped createAgentWorker) and a plain in-process loop (bench/baseline.ts), then
// prints one table and writes bench-results/bench.{json,md}. Progress goes to stderr.
// docs/benchmark.md explains the method, the tuning and the results. `--help` lists the flags.
import { measureCliColdStart } from './cli-start';
import type { CliStartResult } from './cli-start';
import { measureWorkerStart } from './worker-start';
import type { WorkerStartResult } from './worker-start';
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import { cancelRun, runResult, startRun } from '../client/agent-client';
import { PREBUILT_BUNDLES, bundleStaleness } from '../worker/workflow-bundle';
import type { TemporalEnv } from '../runtime/temporal-env';
import type { AgentInput, AgentResult } from '../common/types';
import { chainCost } from './history';
import { PAYLOAD_TURNS, payloadSizes } from './payload-size';
import type { PayloadSize } from './payload-size';
import type { ChainCost } from './history';
import type { InProcessReply } from './baseline';
import { benchInput, scenarioScript } from './scenario';
import type { ScenarioOptions } from './scenario';
import {
  bytes,
  markdownTable,
  median,
  ms,
  procCpuMs,
  procTreeCpuMs,
  prng,
  secs,
  signed,
  summarize,
  textTable,
} from './stats';
import type { Summary } from './stats';
import { mapPool } from '../client/concurrency';
import type { WorkerStats } from './stats';
import { parseBenchArgs } from './options';
import type { CrashMode, Options } from './options';
import { startDevServer } from '../local-servers/dev-server';
import { startPostgresServer } from '../local-servers/postgres-server';
import { findPostgresBinDir } from '../local-servers/postgres-binaries';
import type { PostgresTemporalServer } from '../local-servers/postgres-server';
import { eagerActivityCount } from '../local-servers/eager-activity-count';
import type { TemporalServerHandle } from '../local-servers/server-handle';
import { findOrBuildTemporalCli } from '../local-servers/temporal-cli';
import { ScriptedLlmServer } from '../offline-model/scripted-llm-server';
import type { RecordedRequest } from '../offline-model/scripted-llm-server';

const execFileP = promisify(execFile);
const DIST = path.resolve(__dirname, '..');

// ---- plumbing ------------------------------------------------------------------------------

const t0 = Date.now();
function progress(msg: string): void {
  process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);
}

const sleep = (msec: number) => new Promise<void>((r) => setTimeout(r, msec));
const children = new Set<ChildProcess>();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  // Exit through process.exit so the exit hooks below (and the dev server's) kill every child.
  process.once(signal, () => {
    progress(`${signal}: stopping`);
    process.exit(130);
  });
}
process.on('exit', () => {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {
      /* gone */
    }
  }
});

/**
 * CPU of the Temporal server: the dev server is one process; on PostgreSQL it is the server process
 * plus PostgreSQL (the postmaster, its live backends, and the exited ones it has reaped).
 */
function serverCpuMs(server: TemporalServerHandle): number {
  const own = procCpuMs(server.pid);
  if (server.kind !== 'postgres') return own;
  return own + procTreeCpuMs((server as PostgresTemporalServer).postgres.pid);
}

function procRssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

interface BenchWorker {
  proc: ChildProcess;
  readyAt: Promise<number>;
  spawnedAt: number;
  stats(): Promise<WorkerStats>;
  /** SIGKILL, resolves when the process is gone */
  kill(): Promise<void>;
  /** graceful shutdown (SIGKILL after 15 s) */
  stop(): Promise<void>;
}

interface Ctx {
  opts: Options;
  server: TemporalServerHandle;
  llm: ScriptedLlmServer;
  client: Client;
  scenarios: Map<string, ScenarioOptions>;
  logDir: string;
  workerCount: number;
}

function startWorker(ctx: Ctx, taskQueue: string, what: string, extraEnv: Record<string, string> = {}): BenchWorker {
  const n = ++ctx.workerCount;
  const logFile = path.join(ctx.logDir, `worker-${n}-${what}.log`);
  const fd = fs.openSync(logFile, 'a');
  const spawnedAt = Date.now();
  const proc = fork(path.join(DIST, 'bench', 'worker.js'), [], {
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

function envFor(ctx: Ctx, taskQueue: string): TemporalEnv {
  return { address: ctx.server.address, namespace: ctx.server.namespace, taskQueue, uiUrl: ctx.server.uiUrl ?? '' };
}

/** A bench run's input; --no-search-attributes asks startRun not to have the workflow upsert them. */
function runInput(ctx: Ctx, steps: number, extra: Partial<AgentInput> = {}): AgentInput {
  return benchInput(steps, { ...(ctx.opts.searchAttributes ? {} : { search_attributes: false }), ...extra });
}

let idCounter = 0;
function newId(phase: string): string {
  return `bench-${phase}-${process.pid}-${++idCounter}`;
}

interface DurableRun {
  id: string;
  runId: string;
  ms: number;
  result?: AgentResult;
  error?: string;
}

/**
 * Starts a run per id, at most 50 starts in flight (a client would not open 500 RPCs at once
 * either), and awaits every result; each run's clock starts at its own start call.
 */
async function startAll(
  ctx: Ctx,
  env: TemporalEnv,
  ids: readonly string[],
  input: AgentInput,
  onDone: () => void,
): Promise<DurableRun[]> {
  const results: Array<Promise<DurableRun>> = [];
  await mapPool(ids, 50, async (id) => {
    const t = performance.now();
    const ended = (fields: Omit<DurableRun, 'id' | 'ms'>): DurableRun => ({ id, ms: performance.now() - t, ...fields });
    try {
      const handle = await startRun(ctx.client, env, input, id);
      const runId = firstRunId(handle);
      results.push(
        runResult(handle)
          .then(
            (result) => ended({ runId, result }),
            (err: unknown) => ended({ runId, error: String(err) }),
          )
          .finally(onDone),
      );
    } catch (err) {
      results.push(Promise.resolve(ended({ runId: '', error: String(err) })));
    }
  });
  return Promise.all(results);
}

async function runDurable(ctx: Ctx, env: TemporalEnv, id: string, input: AgentInput): Promise<DurableRun> {
  const start = performance.now();
  let runId = '';
  try {
    const handle = await startRun(ctx.client, env, input, id);
    runId = firstRunId(handle);
    const result = await runResult(handle);
    return { id, runId, ms: performance.now() - start, result };
  } catch (err) {
    return { id, runId, ms: performance.now() - start, error: err instanceof Error ? err.message : String(err) };
  }
}

/** startRun returns what client.workflow.start returns; its declared type just does not say so. */
function firstRunId(handle: WorkflowHandle): string {
  return (handle as WorkflowHandleWithFirstExecutionRunId).firstExecutionRunId;
}

function ok(run: DurableRun, steps: number): boolean {
  return run.result?.stop_reason === 'success' && run.result.usage.steps === steps;
}

/** Where the time of one durable run went, from its history (server timestamps). */
interface Breakdown {
  serverMs: number;
  activityQueueMs: number;
  decideMs: number;
  toolMs: number;
  wftQueueMs: number;
  wftRunMs: number;
  events: number;
}

function breakdown(events: temporal.api.history.v1.IHistoryEvent[]): Breakdown {
  const t = (e: temporal.api.history.v1.IHistoryEvent) => tsToMs(e.eventTime);
  const byId = new Map<number, temporal.api.history.v1.IHistoryEvent>();
  for (const e of events) byId.set(Number(e.eventId), e);
  const b: Breakdown = {
    serverMs: 0,
    activityQueueMs: 0,
    decideMs: 0,
    toolMs: 0,
    wftQueueMs: 0,
    wftRunMs: 0,
    events: events.length,
  };
  if (events.length) b.serverMs = t(events[events.length - 1]!) - t(events[0]!);
  for (const e of events) {
    if (e.activityTaskStartedEventAttributes) {
      const s = byId.get(Number(e.activityTaskStartedEventAttributes.scheduledEventId));
      if (s) b.activityQueueMs += t(e) - t(s);
    }
    if (e.activityTaskCompletedEventAttributes) {
      const a = e.activityTaskCompletedEventAttributes;
      const s = byId.get(Number(a.scheduledEventId));
      const st = byId.get(Number(a.startedEventId));
      if (s && st) {
        const isDecide = s.activityTaskScheduledEventAttributes?.activityType?.name === 'decide';
        if (isDecide) b.decideMs += t(e) - t(st);
        else b.toolMs += t(e) - t(st);
      }
    }
    if (e.workflowTaskStartedEventAttributes) {
      const s = byId.get(Number(e.workflowTaskStartedEventAttributes.scheduledEventId));
      if (s) b.wftQueueMs += t(e) - t(s);
    }
    if (e.workflowTaskCompletedEventAttributes) {
      const st = byId.get(Number(e.workflowTaskCompletedEventAttributes.startedEventId));
      if (st) b.wftRunMs += t(e) - t(st);
    }
  }
  return b;
}

function eventTypeName(e: temporal.api.history.v1.IHistoryEvent): string {
  const key = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]);
  return key ? key.replace(/EventAttributes$/, '') : String(e.eventType);
}

// ---- phase: per-step overhead --------------------------------------------------------------

interface OverheadLevel {
  latencyMs: number;
  steps: number;
  durableMs: Summary;
  inProcessMs: Summary;
  overheadPerStepMs: Summary;
  ratio: number;
  overheadPct: number;
  failed: number;
  /** CPU time per step: worker process, dev server process (durable runs), in-process loop process */
  cpuPerStepMs: { worker: number; server: number; inProcess: number };
  breakdownPerStepMs: Record<keyof Omit<Breakdown, 'events'>, number> & { events: number };
  /** On PostgreSQL: the share of the measured runs' activities the server handed out eagerly (0-1). */
  eagerShare?: number;
}

/** The server's eager activity counter, or undefined on the dev server (which does not publish it here). */
async function serverEagerActivities(server: TemporalServerHandle): Promise<number | undefined> {
  return server.kind === 'postgres' ? eagerActivityCount((server as PostgresTemporalServer).metricsUrl) : undefined;
}

async function phaseOverhead(ctx: Ctx): Promise<OverheadLevel[]> {
  const { opts } = ctx;
  const tq = newId('overhead-tq');
  const env = envFor(ctx, tq);
  const worker = startWorker(ctx, tq, 'overhead');
  // Its activity log lines go to a file, as the worker's do (same logger, same cost).
  const inprocLog = fs.openSync(path.join(ctx.logDir, 'in-process-baseline.log'), 'a');
  const inproc = fork(path.join(DIST, 'bench', 'baseline.js'), [], {
    env: { ...process.env, OPENAI_BASE_URL: ctx.llm.baseUrl, OPENAI_API_KEY: 'bench', OPENAI_TIMEOUT_SECONDS: '120' },
    stdio: ['ignore', inprocLog, inprocLog, 'ipc'],
  });
  children.add(inproc);
  const inprocExited = new Promise<void>((r) => inproc.once('exit', () => (children.delete(inproc), r())));
  const waiting = new Map<string, (r: InProcessReply) => void>();
  const inprocReady = new Promise<void>((resolve) => {
    inproc.on('message', (m: { type: 'ready' } | InProcessReply) => {
      if (m.type === 'ready') resolve();
      else if (m.type === 'done') waiting.get(m.workflowId)?.(m);
    });
  });
  const runInProc = (id: string, input: AgentInput) =>
    new Promise<InProcessReply>((resolve) => {
      waiting.set(id, resolve);
      inproc.send({ type: 'run', workflowId: id, input });
    });
  const statsWaiters: Array<(s: WorkerStats) => void> = [];
  inproc.on('message', (m: WorkerStats) => {
    if (m?.type === 'stats') statsWaiters.shift()?.(m);
  });
  const inprocStats = () =>
    new Promise<WorkerStats>((resolve) => {
      statsWaiters.push(resolve);
      inproc.send({ type: 'stats' });
    });
  const cpuMs = (s: WorkerStats) => (s.cpuUserUs + s.cpuSystemUs) / 1000;
  try {
    await Promise.all([worker.readyAt, inprocReady]);
    const levels: OverheadLevel[] = [];
    for (const latency of opts.latencies) {
      const durable: number[] = [];
      const local: number[] = [];
      const perStep: number[] = [];
      const breakdowns: Breakdown[] = [];
      const measured: DurableRun[] = [];
      let failed = 0;
      const total = opts.warmup + opts.trials;
      let cpu0 = { worker: 0, inproc: 0, server: 0 };
      let eager0: number | undefined;
      for (let trial = 0; trial < total; trial++) {
        const warm = trial < opts.warmup;
        if (trial === opts.warmup) {
          // Before the CPU baseline: the wait for the server's metrics is idle time, not a step's.
          eager0 = await serverEagerActivities(ctx.server);
          cpu0 = {
            worker: cpuMs(await worker.stats()),
            inproc: cpuMs(await inprocStats()),
            server: serverCpuMs(ctx.server),
          };
        }
        const dId = newId(`overhead-d${latency}`);
        const iId = newId(`overhead-i${latency}`);
        ctx.scenarios.set(dId, { steps: opts.steps, delayMs: latency });
        ctx.scenarios.set(iId, { steps: opts.steps, delayMs: latency });
        const input = runInput(ctx, opts.steps);
        // Alternate which side goes first, so drift in machine load hits both alike.
        let d: DurableRun;
        let i: InProcessReply;
        if (trial % 2 === 0) {
          d = await runDurable(ctx, env, dId, input);
          i = await runInProc(iId, input);
        } else {
          i = await runInProc(iId, input);
          d = await runDurable(ctx, env, dId, input);
        }
        const good = ok(d, opts.steps) && i.stop_reason === 'success' && i.steps === opts.steps;
        if (warm) continue;
        if (!good) {
          failed++;
          progress(
            `overhead: failed trial at ${latency} ms: durable ${d.error ?? d.result?.stop_reason} after ` +
              `${d.result?.usage.steps ?? '?'} step(s), in-process ${i.error ?? i.stop_reason} after ${i.steps} step(s)`,
          );
          continue;
        }
        durable.push(d.ms);
        local.push(i.ms);
        perStep.push((d.ms - i.ms) / opts.steps);
        measured.push(d);
      }
      // CPU per step, a measure that machine load distorts far less than wall-clock time. The
      // worker and the server idle (but for polling) while the in-process loop runs, and vice versa.
      const stepsRun = Math.max(1, measured.length * opts.steps);
      const cpuPerStepMs = {
        worker: (cpuMs(await worker.stats()) - cpu0.worker) / stepsRun,
        server: (serverCpuMs(ctx.server) - cpu0.server) / stepsRun,
        inProcess: (cpuMs(await inprocStats()) - cpu0.inproc) / stepsRun,
      };
      const eager1 = await serverEagerActivities(ctx.server);
      let scheduled = 0;
      for (const d of measured) {
        const events = (await ctx.client.workflow.getHandle(d.id, d.runId).fetchHistory()).events ?? [];
        breakdowns.push(breakdown(events));
        scheduled += events.filter((e) => e.activityTaskScheduledEventAttributes).length;
      }
      // Failed trials' activities count in the server's counter too; they are rare and reported.
      const eagerShare =
        eager0 !== undefined && eager1 !== undefined && scheduled > 0 ? (eager1 - eager0) / scheduled : undefined;
      const dMed = median(durable);
      const iMed = median(local);
      const per = (k: keyof Breakdown) => median(breakdowns.map((b) => b[k])) / opts.steps;
      const level: OverheadLevel = {
        latencyMs: latency,
        steps: opts.steps,
        durableMs: summarize(durable),
        inProcessMs: summarize(local),
        overheadPerStepMs: summarize(perStep),
        ratio: dMed / iMed,
        overheadPct: ((dMed - iMed) / iMed) * 100,
        failed,
        cpuPerStepMs,
        breakdownPerStepMs: {
          serverMs: per('serverMs'),
          activityQueueMs: per('activityQueueMs'),
          decideMs: per('decideMs'),
          toolMs: per('toolMs'),
          wftQueueMs: per('wftQueueMs'),
          wftRunMs: per('wftRunMs'),
          events: per('events'),
        },
        ...(eagerShare !== undefined ? { eagerShare } : {}),
      };
      levels.push(level);
      progress(
        `overhead @${latency} ms: durable ${ms(dMed)} vs in-process ${ms(iMed)} per ${opts.steps}-step run; ` +
          `overhead ${ms(level.overheadPerStepMs.median)}/step median, ${ms(level.overheadPerStepMs.p95)} p95 (×${level.ratio.toFixed(2)}); ` +
          `CPU/step: worker ${ms(cpuPerStepMs.worker)}, server ${ms(cpuPerStepMs.server)}, in-process ${ms(cpuPerStepMs.inProcess)}` +
          (eagerShare !== undefined ? `; activities dispatched eagerly ${(eagerShare * 100).toFixed(0)} %` : ''),
      );
    }
    return levels;
  } finally {
    inproc.disconnect();
    await Promise.race([inprocExited, sleep(5000)]);
    inproc.kill('SIGKILL');
    await worker.stop();
  }
}

// ---- phase: throughput ---------------------------------------------------------------------

interface ThroughputTrial {
  concurrency: number;
  latencyMs: number;
  wallMs: number;
  runsPerSec: number;
  stepsPerSec: number;
  failed: number;
  runMs: Summary;
  workerCpuPct: number;
  workerPeakRssBytes: number;
  serverCpuPct: number;
  serverRssBytes: number;
  /** this process: the client and the scripted LLM server */
  benchCpuPct: number;
  cpuPerStepMs: { worker: number; server: number; bench: number };
  wftTimeouts: number;
  activityRetries: number;
  /** On PostgreSQL: committed transactions per step, all databases (the sizing's unit). */
  dbCommitsPerStep?: number;
  errors: string[];
}

/** Committed transactions so far in PostgreSQL (pg_stat_database), or undefined on the dev server. */
async function pgCommits(server: TemporalServerHandle): Promise<number | undefined> {
  if (server.kind !== 'postgres') return undefined;
  const { port } = (server as PostgresTemporalServer).postgres;
  const psql = path.join(findPostgresBinDir(), 'psql');
  const sql = 'select sum(xact_commit) from pg_stat_database';
  const { stdout } = await execFileP(psql, [
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-U',
    'temporal',
    '-d',
    'temporal',
    '-Atc',
    sql,
  ]);
  return Number(stdout.trim());
}

async function phaseThroughput(ctx: Ctx): Promise<ThroughputTrial[]> {
  const { opts } = ctx;
  const out: ThroughputTrial[] = [];
  for (const c of opts.concurrency) {
    for (let trial = 0; trial < opts.throughputTrials; trial++) {
      const tq = newId(`tp${c}-tq`);
      const env = envFor(ctx, tq);
      const worker = startWorker(ctx, tq, `throughput-${c}`);
      try {
        await worker.readyAt;
        // One run first: a fresh worker's first workflow task loads the bundle into its V8 context,
        // a one-off cost (about 1 s of CPU here) that would otherwise be charged to C=1.
        const warmId = newId(`tp${c}-warmup`);
        ctx.scenarios.set(warmId, { steps: opts.steps, delayMs: 0 });
        await runDurable(ctx, env, warmId, runInput(ctx, opts.steps));
        const ids = Array.from({ length: c }, () => newId(`tp${c}`));
        for (const id of ids) ctx.scenarios.set(id, { steps: opts.steps, delayMs: opts.throughputLatency });
        const s0 = await worker.stats();
        const server0 = serverCpuMs(ctx.server);
        const commits0 = await pgCommits(ctx.server);
        const self0 = process.cpuUsage();
        const start = performance.now();
        let done = 0;
        let maxServerRss = procRssBytes(ctx.server.pid);
        const ticker = setInterval(() => {
          maxServerRss = Math.max(maxServerRss, procRssBytes(ctx.server.pid));
          void worker.stats().then(
            (s) =>
              progress(`throughput C=${c} trial ${trial + 1}: ${done}/${c} runs done, worker RSS ${bytes(s.rssBytes)}`),
            () => undefined,
          );
        }, 5000);
        let runs: DurableRun[];
        try {
          runs = await startAll(ctx, env, ids, runInput(ctx, opts.steps), () => done++);
        } finally {
          clearInterval(ticker);
        }
        const wall = performance.now() - start;
        const s1 = await worker.stats();
        const server1 = serverCpuMs(ctx.server);
        const commits1 = await pgCommits(ctx.server);
        const self1 = process.cpuUsage(self0);
        // Signs of overload in the histories: workflow tasks that timed out (sticky queue
        // schedule-to-start, or too slow) and activity retries (e.g. missed heartbeats).
        let wftTimeouts = 0;
        let activityRetries = 0;
        await mapPool(
          runs.filter((r) => r.runId),
          8,
          async (r) => {
            const h = await ctx.client.workflow.getHandle(r.id, r.runId).fetchHistory();
            for (const e of h.events ?? []) {
              if (e.workflowTaskTimedOutEventAttributes) wftTimeouts++;
              if ((e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1) activityRetries++;
            }
          },
        );
        const good = runs.filter((r) => ok(r, opts.steps));
        const steps = runs.reduce((n, r) => n + (r.result?.usage.steps ?? 0), 0);
        const t: ThroughputTrial = {
          concurrency: c,
          latencyMs: opts.throughputLatency,
          wallMs: wall,
          runsPerSec: (good.length * 1000) / wall,
          stepsPerSec: (steps * 1000) / wall,
          failed: runs.length - good.length,
          runMs: summarize(runs.map((r) => r.ms)),
          workerCpuPct: ((s1.cpuUserUs + s1.cpuSystemUs - s0.cpuUserUs - s0.cpuSystemUs) / 1000 / wall) * 100,
          workerPeakRssBytes: s1.maxRssBytes,
          serverCpuPct: ((server1 - server0) / wall) * 100,
          serverRssBytes: maxServerRss,
          benchCpuPct: ((self1.user + self1.system) / 1000 / wall) * 100,
          cpuPerStepMs: {
            worker: (s1.cpuUserUs + s1.cpuSystemUs - s0.cpuUserUs - s0.cpuSystemUs) / 1000 / Math.max(1, steps),
            server: (server1 - server0) / Math.max(1, steps),
            bench: (self1.user + self1.system) / 1000 / Math.max(1, steps),
          },
          wftTimeouts,
          activityRetries,
          ...(commits0 !== undefined && commits1 !== undefined
            ? { dbCommitsPerStep: (commits1 - commits0) / Math.max(1, steps) }
            : {}),
          errors: [
            ...new Set(
              runs.filter((r) => !ok(r, opts.steps)).map((r) => r.error ?? `stop_reason ${r.result?.stop_reason}`),
            ),
          ].slice(0, 5),
        };
        out.push(t);
        progress(
          `throughput C=${c}: ${t.runsPerSec.toFixed(1)} runs/s, ${t.stepsPerSec.toFixed(0)} steps/s, run ${ms(t.runMs.median)} median / ${ms(t.runMs.p95)} p95, ` +
            `worker CPU ${t.workerCpuPct.toFixed(0)}%, peak RSS ${bytes(t.workerPeakRssBytes)}, server CPU ${t.serverCpuPct.toFixed(0)}%, client+LLM CPU ${t.benchCpuPct.toFixed(0)}%, ` +
            `workflow task timeouts ${t.wftTimeouts}, activity retries ${t.activityRetries}, failed ${t.failed}`,
        );
      } finally {
        await worker.stop();
      }
    }
  }
  return out;
}

// ---- phase: history cost -------------------------------------------------------------------

interface HistoryReport {
  steps: number;
  continueAsNewEvery: number | 'default';
  runs: ChainCost['runs'];
  at: Array<{ step: number; events: number; bytes: number; decideInputBytes: number }>;
  /** bytes per step at the last reported step / at the first */
  growth: number;
  meanStepBytes: number;
  result: string;
}

async function phaseHistory(ctx: Ctx): Promise<HistoryReport> {
  const { opts } = ctx;
  const tq = newId('history-tq');
  const env = envFor(ctx, tq);
  const worker = startWorker(ctx, tq, 'history');
  try {
    await worker.readyAt;
    const id = newId('history');
    ctx.scenarios.set(id, { steps: opts.longSteps, delayMs: 0 });
    progress(`history: one run of ${opts.longSteps} steps`);
    const longInput = runInput(
      ctx,
      opts.longSteps,
      opts.continueAsNewEvery !== undefined ? { continue_as_new_every: opts.continueAsNewEvery } : {},
    );
    const run = await runDurable(ctx, env, id, longInput);
    const cost = await chainCost(ctx.client, id, run.runId);
    const at = opts.historyStepsAt.map((step) => {
      const s = cost.steps.get(step);
      return { step, events: s?.events ?? NaN, bytes: s?.bytes ?? NaN, decideInputBytes: s?.decideInputBytes ?? NaN };
    });
    const all = [...cost.steps.values()];
    const report: HistoryReport = {
      steps: opts.longSteps,
      continueAsNewEvery: opts.continueAsNewEvery ?? 'default',
      runs: cost.runs,
      at,
      growth: at.length > 1 ? at[at.length - 1]!.bytes / at[0]!.bytes : NaN,
      meanStepBytes: all.reduce((n, s) => n + s.bytes, 0) / Math.max(1, all.length),
      result: run.error ?? run.result?.stop_reason ?? 'n/a',
    };
    progress(
      `history: ${at.map((a) => `step ${a.step}: ${a.events} events, ${bytes(a.bytes)}`).join('; ')}; ` +
        `runs: ${cost.runs.map((r) => `[${r.firstStep}-${r.lastStep}] ${r.events} ev ${bytes(r.bytes)} (start ${bytes(r.startEventBytes)}, ${r.closeType} ${bytes(r.closeEventBytes)})`).join(' ')}`,
    );
    return report;
  } finally {
    await worker.stop();
  }
}

// ---- phase: cancel latency -----------------------------------------------------------------

interface CancelTrial {
  via: 'api' | 'cli';
  waitBeforeCancelMs: number;
  abortMs: number;
  closedMs: number;
  ok: boolean;
}

interface CancelReport {
  api: { abortMs: Summary; closedMs: Summary; failed: number };
  cli?: { abortMs: Summary; closedMs: Summary; failed: number };
  trials: CancelTrial[];
}

async function phaseCancel(ctx: Ctx): Promise<CancelReport> {
  const { opts } = ctx;
  const tq = newId('cancel-tq');
  const env = envFor(ctx, tq);
  const worker = startWorker(ctx, tq, 'cancel');
  const rand = prng(opts.seed);
  const cliJs = path.join(DIST, 'cli', 'cli.js');
  const hasCli = fs.existsSync(cliJs);
  const trials: CancelTrial[] = [];
  try {
    await worker.readyAt;
    const plan: Array<'api' | 'cli'> = [
      ...Array<'api'>(opts.cancelTrials).fill('api'),
      ...(hasCli ? Array<'cli'>(opts.cliCancelTrials).fill('cli') : []),
    ];
    if (!hasCli) progress('cancel: dist/cli/cli.js not found, measuring through the client API only');
    for (const [n, via] of plan.entries()) {
      const id = newId('cancel');
      ctx.scenarios.set(id, { steps: opts.steps, delayMs: 0, hangAt: () => 2 });
      const handle = await startRun(ctx.client, env, runInput(ctx, opts.steps), id);
      const slow = await ctx.llm.waitFor((r) => r.workflowId === id && r.step === 2, 30_000);
      // A random moment in the slow call, so heartbeat phases are sampled evenly.
      const wait = Math.round(rand() * 1000);
      await sleep(wait);
      const cancelledAt = Date.now();
      if (via === 'api') {
        await cancelRun(ctx.client, id, 'bench: cancel latency');
      } else {
        await execFileP(process.execPath, [cliJs, 'cancel', id, '--reason', 'bench: cancel latency'], {
          env: {
            ...process.env,
            TEMPORAL_ADDRESS: ctx.server.address,
            TEMPORAL_NAMESPACE: ctx.server.namespace,
            TEMPORAL_TASK_QUEUE: tq,
          },
        });
      }
      let abortMs = NaN;
      let good = true;
      try {
        const aborted = await ctx.llm.waitForAbort((r) => r.id === slow.id, 15_000);
        abortMs = aborted.closedAt! - cancelledAt;
      } catch {
        good = false;
      }
      const result = await runResult(handle).catch(() => undefined);
      const history = await handle.fetchHistory();
      const closeEvent = (history.events ?? []).find((e) => e.workflowExecutionCanceledEventAttributes);
      const closedMs = closeEvent ? tsToMs(closeEvent.eventTime) - cancelledAt : NaN;
      good = good && result?.stop_reason === 'cancelled' && closeEvent !== undefined;
      trials.push({ via, waitBeforeCancelMs: wait, abortMs, closedMs, ok: good });
      progress(
        `cancel ${n + 1}/${plan.length} (${via}): LLM request aborted after ${ms(abortMs)}, run closed after ${ms(closedMs)}${good ? '' : ' (FAILED)'}`,
      );
    }
  } finally {
    await worker.stop();
  }
  const sum = (via: 'api' | 'cli') => {
    const ts = trials.filter((t) => t.via === via);
    const good = ts.filter((t) => t.ok);
    return {
      abortMs: summarize(good.map((t) => t.abortMs)),
      closedMs: summarize(good.map((t) => t.closedMs)),
      failed: ts.length - good.length,
    };
  };
  return { api: sum('api'), ...(hasCli && opts.cliCancelTrials > 0 ? { cli: sum('cli') } : {}), trials };
}

// ---- phase: crash recovery -----------------------------------------------------------------

interface CrashTrial {
  /** restart: the new worker is started after the kill; standby: a second worker was already polling */
  mode: CrashMode;
  waitBeforeKillMs: number;
  /** SIGKILL -> new worker polling (process start, connect, bundle load); 0 for a standby worker */
  killToReadyMs: number;
  /** new worker ready (standby: the kill) -> the interrupted decide is asked again */
  readyToRetryMs: number;
  /** the re-run of the interrupted call (request received -> answered) */
  rerunMs: number;
  /** re-run answered -> the step's tool done and the next decision asked (workflow tasks, sticky queue) */
  rerunToNextStepMs: number;
  /** the target's measure: ready (standby: the kill) -> next step under way, minus the re-run itself */
  recoveryMs: number;
  /** SIGKILL -> next step under way, everything included */
  totalMs: number;
  stickyTimeouts: number;
  ok: boolean;
  /** [ms after SIGKILL, event type] of the run's history around the crash */
  timeline: Array<[number, string]>;
}

interface CrashModeReport {
  recoveryMs: Summary;
  readyToRetryMs: Summary;
  rerunToNextStepMs: Summary;
  killToReadyMs: Summary;
  totalMs: Summary;
  stickyTimeouts: number;
  failed: number;
}

interface CrashReport {
  modes: Partial<Record<CrashMode, CrashModeReport>>;
  trials: CrashTrial[];
}

async function crashTrial(ctx: Ctx, mode: CrashMode, wait: number): Promise<CrashTrial> {
  const { opts } = ctx;
  const tq = newId('crash-tq');
  const env = envFor(ctx, tq);
  const first = startWorker(ctx, tq, 'crash-a');
  let second: BenchWorker | undefined;
  try {
    await first.readyAt;
    const id = newId('crash');
    ctx.scenarios.set(id, { steps: opts.steps, delayMs: opts.crashLatency, hangAt: () => 2 });
    const handle = await startRun(ctx.client, env, runInput(ctx, opts.steps), id);
    const inFlight = await ctx.llm.waitFor((r) => r.workflowId === id && r.step === 2, 30_000);
    if (mode === 'standby') {
      // Started only now, so the run and its step in flight are surely on the first worker.
      second = startWorker(ctx, tq, 'crash-standby');
      await second.readyAt;
    }
    await sleep(wait);
    const killedAt = Date.now();
    await first.kill();
    let readyAt = killedAt;
    if (mode === 'restart') {
      second = startWorker(ctx, tq, 'crash-b');
      readyAt = await second.readyAt;
    }
    const retry: RecordedRequest = await ctx.llm.waitFor(
      (r) => r.workflowId === id && r.step === 2 && r.id !== inFlight.id,
      120_000,
    );
    const next = await ctx.llm.waitFor((r) => r.workflowId === id && r.step === 3, 120_000);
    const result = await runResult(handle).catch(() => undefined);
    const history = await handle.fetchHistory();
    const stickyTimeouts = (history.events ?? []).filter((e) => e.workflowTaskTimedOutEventAttributes).length;
    const timeline = (history.events ?? [])
      .filter((e) => tsToMs(e.eventTime) >= killedAt - 5_000 && tsToMs(e.eventTime) <= next.receivedAt + 1_000)
      .map((e): [number, string] => [Math.round(tsToMs(e.eventTime) - killedAt), eventTypeName(e)]);
    const rerunMs = (retry.closedAt ?? NaN) - retry.receivedAt;
    return {
      mode,
      waitBeforeKillMs: wait,
      killToReadyMs: readyAt - killedAt,
      readyToRetryMs: retry.receivedAt - readyAt,
      rerunMs,
      rerunToNextStepMs: next.receivedAt - (retry.closedAt ?? NaN),
      recoveryMs: next.receivedAt - readyAt - rerunMs,
      totalMs: next.receivedAt - killedAt,
      stickyTimeouts,
      ok: result?.stop_reason === 'success',
      timeline,
    };
  } finally {
    await first.kill();
    await second?.stop();
  }
}

async function phaseCrash(ctx: Ctx): Promise<CrashReport> {
  const { opts } = ctx;
  const rand = prng(opts.seed + 1);
  const trials: CrashTrial[] = [];
  const plan = opts.crashModes.flatMap((mode) => Array<CrashMode>(opts.crashTrials).fill(mode));
  for (const [n, mode] of plan.entries()) {
    // Killed at a random moment 0.2-1.2 s into the hanging call: heartbeat phases sampled evenly.
    const t = await crashTrial(ctx, mode, 200 + Math.round(rand() * 1000));
    trials.push(t);
    progress(
      `crash ${n + 1}/${plan.length} (${mode}): kill→ready ${secs(t.killToReadyMs)}, ready→retry ${secs(t.readyToRetryMs)}, re-run ${ms(t.rerunMs)}, ` +
        `re-run→next step ${secs(t.rerunToNextStepMs)} (workflow task timeouts: ${t.stickyTimeouts}); recovery ${secs(t.recoveryMs)}${t.ok ? '' : ' (FAILED)'}`,
    );
  }
  const modes: CrashReport['modes'] = {};
  for (const mode of opts.crashModes) {
    const ts = trials.filter((t) => t.mode === mode);
    const good = ts.filter((t) => t.ok);
    const s = (k: keyof CrashTrial) => summarize(good.map((t) => t[k] as number));
    modes[mode] = {
      recoveryMs: s('recoveryMs'),
      readyToRetryMs: s('readyToRetryMs'),
      rerunToNextStepMs: s('rerunToNextStepMs'),
      killToReadyMs: s('killToReadyMs'),
      totalMs: s('totalMs'),
      stickyTimeouts: good.reduce((n, t) => n + t.stickyTimeouts, 0),
      failed: ts.length - good.length,
    };
  }
  return { modes, trials };
}

// ---- phase: fleet-wide LLM rate limit ------------------------------------------------------

interface LimiterTrial {
  limiter: boolean;
  runs: number;
  steps: number;
  tpm: number;
  wallMs: number;
  succeeded: number;
  llmError: number;
  llmTimeout: number;
  otherEnd: number;
  /** The most tokens the provider answered within one minute. */
  maxTpmSeen: number;
  refused429: number;
  runMs: Summary;
  /** How the runs ended: stop reason, or `error: ...` when the result could not be read. */
  ends: Record<string, number>;
  errors: string[];
}

/**
 * N concurrent runs against a provider that answers 429 (with Retry-After) above its tokens per
 * minute: once with every worker calling it freely, once through the limiter set to the same TPM.
 */
async function phaseLimiter(ctx: Ctx): Promise<LimiterTrial[]> {
  const { opts } = ctx;
  const out: LimiterTrial[] = [];
  // With the limiter first: the storm without it leaves a loaded server behind.
  for (const limiter of [true, false]) {
    const what = limiter ? 'with limiter' : 'without limiter';
    const provider = await ScriptedLlmServer.start({
      tokensPerMinute: opts.limiterTpm,
      defaultScript: scenarioScript({ steps: opts.limiterSteps, delayMs: 0 }),
    });
    const tq = newId(`limiter-${limiter ? 'on' : 'off'}-tq`);
    // A model of its own (its own limiter); a worker refuses a model it cannot price (docs/cost.md).
    const model = `bench-model-${tq}`;
    const pricesFile = path.join(ctx.logDir, `prices-${tq}.json`);
    fs.writeFileSync(pricesFile, JSON.stringify({ [model]: { input_usd_per_mtok: 0.4, output_usd_per_mtok: 1.6 } }));
    const worker = startWorker(ctx, tq, `limiter-${limiter ? 'on' : 'off'}`, {
      OPENAI_BASE_URL: provider.baseUrl,
      OPENAI_MODEL: model,
      AGENT_PRICES_FILE: pricesFile,
      ...(limiter ? { AGENT_LLM_TPM: String(opts.limiterTpm) } : {}),
    });
    try {
      await worker.readyAt;
      const env = envFor(ctx, tq);
      const ids = Array.from({ length: opts.limiterRuns }, () => newId(`limiter-${limiter ? 'on' : 'off'}`));
      progress(
        `limiter: ${ids.length} runs of ${opts.limiterSteps} decisions, provider ${opts.limiterTpm} TPM, ${what}`,
      );
      const start = performance.now();
      let done = 0;
      const ticker = setInterval(() => {
        const s = provider.rateLimitStats();
        progress(
          `limiter (${what}): ${done}/${ids.length} runs done; provider answered ${s.answered}, refused ${s.refused}`,
        );
      }, 10_000);
      let runs: DurableRun[];
      try {
        runs = await startAll(ctx, env, ids, runInput(ctx, opts.limiterSteps), () => done++);
      } finally {
        clearInterval(ticker);
      }
      const stats = provider.rateLimitStats();
      const ended = (reason: string) => runs.filter((r) => r.result?.stop_reason === reason).length;
      const t: LimiterTrial = {
        limiter,
        runs: runs.length,
        steps: opts.limiterSteps,
        tpm: opts.limiterTpm,
        wallMs: performance.now() - start,
        succeeded: runs.filter((r) => ok(r, opts.limiterSteps)).length,
        llmError: ended('llm_error'),
        llmTimeout: ended('llm_timeout'),
        otherEnd: 0,
        maxTpmSeen: stats.maxTokensPerMinute,
        refused429: stats.refused,
        runMs: summarize(runs.map((r) => r.ms)),
        ends: {},
        errors: [
          ...new Set(
            runs.filter((r) => !ok(r, opts.limiterSteps)).map((r) => r.error ?? `stop_reason ${r.result?.stop_reason}`),
          ),
        ].slice(0, 5),
      };
      t.otherEnd = t.runs - t.succeeded - t.llmError - t.llmTimeout;
      for (const r of runs) {
        const end = r.result?.stop_reason ?? `error: ${(r.error ?? '').slice(0, 80)}`;
        t.ends[end] = (t.ends[end] ?? 0) + 1;
      }
      out.push(t);
      progress(
        `limiter (${what}): ${t.succeeded}/${t.runs} succeeded, ${t.llmError} llm_error, ${t.llmTimeout} llm_timeout, ${t.otherEnd} other; ` +
          `provider max ${t.maxTpmSeen} TPM (limit ${t.tpm}), ${t.refused429} refused with 429; run ${secs(t.runMs.median)} median / ${secs(t.runMs.p95)} p95; ends ${JSON.stringify(t.ends)}`,
      );
    } finally {
      await worker.stop();
      await provider.close();
    }
  }
  return out;
}

// ---- report --------------------------------------------------------------------------------

interface Report {
  label: string | undefined;
  startedAt: string;
  durationS: number;
  conditions: Record<string, unknown>;
  options: Options;
  overhead?: OverheadLevel[];
  throughput?: ThroughputTrial[];
  history?: HistoryReport;
  historyWithCodec?: string;
  payload?: PayloadSize[];
  cancel?: CancelReport;
  crash?: CrashReport;
  cli?: CliStartResult;
  limiter?: LimiterTrial[];
  workerStart?: WorkerStartResult;
}

const HEADER = ['Measure', 'Setting', 'Result', 'Median', 'p95', 'Target', 'Met'];

function yesNo(cond: boolean | undefined): string {
  return cond === undefined ? '—' : cond ? 'yes' : 'NO';
}

function rows(r: Report): string[][] {
  const out: string[][] = [];
  const o = r.options;
  for (const l of r.overhead ?? []) {
    const target = l.latencyMs === 0 ? '≤ 15 ms/step' : l.latencyMs === 500 ? '≤ 3 %' : '—';
    const met =
      l.latencyMs === 0 ? l.overheadPerStepMs.median <= 15 : l.latencyMs === 500 ? l.overheadPct <= 3 : undefined;
    out.push([
      `overhead per step`,
      `LLM ${l.latencyMs} ms, ${l.steps}-step run, n=${l.overheadPerStepMs.n}${l.failed ? `, ${l.failed} failed` : ''}`,
      `durable ${ms(l.durableMs.median)} vs in-process ${ms(l.inProcessMs.median)} per run (×${l.ratio.toFixed(2)}, ${signed(l.overheadPct, (v) => `${v.toFixed(1)} %`)}); ` +
        `CPU/step: worker ${ms(l.cpuPerStepMs.worker)} + server ${ms(l.cpuPerStepMs.server)} vs in-process ${ms(l.cpuPerStepMs.inProcess)}` +
        (l.eagerShare !== undefined ? `; ${(l.eagerShare * 100).toFixed(0)} % of activities dispatched eagerly` : ''),
      `${signed(l.overheadPerStepMs.median, ms)}/step`,
      `${signed(l.overheadPerStepMs.p95, ms)}/step`,
      target,
      yesNo(met),
    ]);
  }
  if (r.cli) {
    out.push([
      'CLI cold start',
      `agent ${r.cli.args.join(' ')}, n=${r.cli.summary.n} new processes`,
      'spawn to exit, against the bench server',
      ms(r.cli.medianMs),
      ms(r.cli.summary.p95),
      '—',
      yesNo(undefined),
    ]);
  }
  if (r.workerStart) {
    const w = r.workerStart;
    out.push([
      'worker cold start',
      `\`node dist/worker/main.js\` (npm start), n=${w.summary.n} new processes, ${w.prebuilt ? 'prebuilt workflow bundle' : 'NOT the prebuilt bundle'}`,
      `spawn to its first poll (its identity among the task queue's pollers); min ${ms(w.summary.min)}, max ${ms(w.summary.max)}; ` +
        `CPU used by then ${ms(w.cpuMs.median)} median`,
      ms(w.medianMs),
      ms(w.summary.p95),
      '≤ 2 s median',
      yesNo(w.medianMs <= 2000 && w.prebuilt),
    ]);
  }
  const byC = new Map<number, ThroughputTrial[]>();
  for (const t of r.throughput ?? []) byC.set(t.concurrency, [...(byC.get(t.concurrency) ?? []), t]);
  for (const [c, ts] of byC) {
    const failed = ts.reduce((n, t) => n + t.failed, 0);
    const rss = Math.max(...ts.map((t) => t.workerPeakRssBytes));
    const target = c === 500 ? '0 failed, RSS < 1.5 GiB' : '0 failed';
    const met = c === 500 ? failed === 0 && rss < 1.5 * 1024 ** 3 : failed === 0;
    out.push([
      `throughput`,
      `C=${c} concurrent ${o.steps}-step runs, LLM ${ts[0]!.latencyMs} ms, ${ts.length} trial(s)`,
      `${median(ts.map((t) => t.runsPerSec)).toFixed(1)} runs/s, ${median(ts.map((t) => t.stepsPerSec)).toFixed(0)} steps/s; ` +
        `worker CPU ${median(ts.map((t) => t.workerCpuPct)).toFixed(0)} % (${ms(median(ts.map((t) => t.cpuPerStepMs.worker)))}/step), peak RSS ${bytes(rss)}; ` +
        `server CPU ${median(ts.map((t) => t.serverCpuPct)).toFixed(0)} % (${ms(median(ts.map((t) => t.cpuPerStepMs.server)))}/step); ` +
        (ts[0]!.dbCommitsPerStep !== undefined
          ? `PostgreSQL ${median(ts.map((t) => t.dbCommitsPerStep ?? 0)).toFixed(1)} commits/step; `
          : '') +
        `${failed} failed, ${ts.reduce((n, t) => n + t.wftTimeouts, 0)} workflow task timeouts, ${ts.reduce((n, t) => n + t.activityRetries, 0)} activity retries`,
      `run ${ms(median(ts.map((t) => t.runMs.median)))}`,
      `run ${ms(Math.max(...ts.map((t) => t.runMs.p95)))}`,
      target,
      yesNo(met),
    ]);
  }
  for (const p of r.payload ?? []) {
    const base = r.payload!.find((q) => q.domain === p.domain && q.turns === PAYLOAD_TURNS[0])!;
    const growth = p.recordedChars / base.recordedChars;
    out.push([
      'decide input recorded',
      `${p.domain}: ${p.tools} tools, a conversation of ${p.turns} turns`,
      `${p.recordedChars} chars recorded; the model's prompt ${p.promptChars} chars (tools described by the activity)`,
      `×${growth.toFixed(2)} of ${PAYLOAD_TURNS[0]} turns`,
      '—',
      'flat in turns; names only for tools',
      yesNo(growth <= 1.5),
    ]);
  }
  if (r.history) {
    const h = r.history;
    const at = h.at
      .map((a) => `step ${a.step}: ${a.events} events, ${bytes(a.bytes)} (decide input ${bytes(a.decideInputBytes)})`)
      .join('; ');
    out.push([
      'history per step',
      `one ${h.steps}-step run, continue_as_new_every ${h.continueAsNewEvery}, no codec`,
      at,
      `mean ${bytes(h.meanStepBytes)}/step`,
      '—',
      `step ${h.at[h.at.length - 1]?.step} ≤ 1.5× step ${h.at[0]?.step}`,
      yesNo(Number.isFinite(h.growth) ? h.growth <= 1.5 : undefined) +
        (Number.isFinite(h.growth) ? ` (×${h.growth.toFixed(2)})` : ''),
    ]);
    for (const run of h.runs) {
      const n = run.lastStep - run.firstStep + 1;
      out.push([
        'history per run',
        `steps ${run.firstStep}-${run.lastStep} (ends: ${run.closeType})`,
        `${run.events} events, ${bytes(run.bytes)} (server: ${run.serverBytes !== undefined ? bytes(run.serverBytes) : 'n/a'}); start event ${bytes(run.startEventBytes)}, close event ${bytes(run.closeEventBytes)}`,
        `${bytes(run.bytes / n)}/step`,
        '—',
        '—',
        '—',
      ]);
    }
    out.push(['history per step, with codec', '—', r.historyWithCodec ?? 'n/a', 'n/a', 'n/a', '—', '—']);
  }
  if (r.cancel) {
    const c = r.cancel;
    out.push([
      'cancel → LLM request aborted',
      `client API (requestCancelWorkflowExecution), n=${c.api.abortMs.n}${c.api.failed ? `, ${c.api.failed} failed` : ''}`,
      `min ${ms(c.api.abortMs.min)}, max ${ms(c.api.abortMs.max)}`,
      ms(c.api.abortMs.median),
      ms(c.api.abortMs.p95),
      '≤ 1 s median',
      yesNo(c.api.abortMs.median <= 1000 && c.api.failed === 0),
    ]);
    out.push([
      'cancel → run closed',
      `client API, n=${c.api.closedMs.n}`,
      `max ${ms(c.api.closedMs.max)}`,
      ms(c.api.closedMs.median),
      ms(c.api.closedMs.p95),
      '—',
      '—',
    ]);
    if (c.cli) {
      out.push([
        'cancel → LLM request aborted',
        `\`agent cancel\` CLI (a new node process), n=${c.cli.abortMs.n}${c.cli.failed ? `, ${c.cli.failed} failed` : ''}`,
        `run closed ${ms(c.cli.closedMs.median)} median`,
        ms(c.cli.abortMs.median),
        ms(c.cli.abortMs.p95),
        '≤ 1 s median',
        yesNo(c.cli.abortMs.median <= 1000 && c.cli.failed === 0),
      ]);
    }
  }
  for (const t of r.limiter ?? []) {
    out.push([
      'LLM rate limit (429 storm)',
      `${t.runs} concurrent runs × ${t.steps} decisions, provider ${t.tpm} TPM with 429 + Retry-After, ${t.limiter ? `limiter at ${t.tpm} TPM` : 'no limiter'}`,
      `${t.succeeded} succeeded, ${t.llmError} llm_error, ${t.llmTimeout} llm_timeout, ${t.otherEnd} other; provider saw max ${t.maxTpmSeen} TPM, refused ${t.refused429}; wall ${secs(t.wallMs)}`,
      `run ${secs(t.runMs.median)}`,
      `run ${secs(t.runMs.p95)}`,
      t.limiter ? `0 llm_*, ≤ ${t.tpm} TPM` : '—',
      t.limiter ? yesNo(t.llmError + t.llmTimeout === 0 && t.maxTpmSeen <= t.tpm) : '—',
    ]);
  }
  for (const [mode, c] of Object.entries(r.crash?.modes ?? {}) as Array<[CrashMode, CrashModeReport]>) {
    const restart = mode === 'restart';
    out.push([
      'crash recovery',
      `SIGKILL mid-decide, ${restart ? 'new worker started after the kill' : 'second worker already running'}, n=${c.recoveryMs.n}${c.failed ? `, ${c.failed} failed` : ''}`,
      (restart
        ? `kill→ready ${secs(c.killToReadyMs.median)}; ready→retry ${secs(c.readyToRetryMs.median)}`
        : `kill→retry ${secs(c.readyToRetryMs.median)}`) +
        `; re-run→next step ${secs(c.rerunToNextStepMs.median)}; kill→next step ${secs(c.totalMs.median)}; ${c.stickyTimeouts} sticky timeouts`,
      secs(c.recoveryMs.median),
      secs(c.recoveryMs.p95),
      restart ? '≤ 5 s after ready + re-run' : '—',
      restart ? yesNo(c.recoveryMs.median <= 5000 && c.failed === 0) : '—',
    ]);
    if (restart) {
      out.push([
        'crash recovery, fresh worker',
        `SIGKILL mid-decide, then a new worker process started, n=${c.totalMs.n}`,
        `kill → new worker polling (${secs(c.killToReadyMs.median)}) → interrupted step re-run and completed → next step asked; everything included`,
        secs(c.totalMs.median),
        secs(c.totalMs.p95),
        '—',
        '—',
      ]);
    }
  }
  return out;
}

function conditionsLine(r: Report): string {
  const c = r.conditions as Record<string, string | number>;
  return (
    `${r.startedAt}, ${r.durationS.toFixed(0)} s, mode ${r.options.mode}${r.label ? `, label ${r.label}` : ''}; ` +
    `${c.cpus} CPU(s) ${c.cpuModel}, ${c.memGiB} GiB; load avg ${c.loadStart} at start, ${c.loadEnd} at end; ` +
    `node ${c.node}, ${c.temporal}; worker metrics ${r.options.metrics ? 'on' : 'off'}, search attribute upserts ${r.options.searchAttributes ? 'on' : 'off'}; ` +
    `worker overrides ${JSON.stringify(r.options.workerOverrides)}; ` +
    `server extras ${JSON.stringify([...r.options.dynamicConfig, ...r.options.sqlitePragmas, ...r.options.serverArgs, ...(r.options.postgresSettings ?? [])])}` +
    (r.options.deployDir ? `, deploy dir ${r.options.deployDir}` : '')
  );
}

function markdown(r: Report): string {
  const parts = [
    `# Benchmark results${r.label ? ` (${r.label})` : ''}`,
    '',
    `Conditions: ${conditionsLine(r)}.`,
    '',
    'Medians and p95 (nearest rank: with fewer than 20 samples, p95 is the maximum) over the trials. See docs/benchmark.md for the method.',
    '',
    markdownTable(HEADER, rows(r)),
  ];
  if (r.overhead?.length) {
    parts.push(
      '',
      "Where a durable step's time goes (server timestamps from the run's history, per step, median run):",
      '',
      markdownTable(
        [
          'LLM latency',
          'run (server) /step',
          'activity queue /step',
          'decide /step',
          'tool /step',
          'workflow task queue /step',
          'workflow task run /step',
          'events /step',
        ],
        r.overhead.map((l) => [
          `${l.latencyMs} ms`,
          ms(l.breakdownPerStepMs.serverMs),
          ms(l.breakdownPerStepMs.activityQueueMs),
          ms(l.breakdownPerStepMs.decideMs),
          ms(l.breakdownPerStepMs.toolMs),
          ms(l.breakdownPerStepMs.wftQueueMs),
          ms(l.breakdownPerStepMs.wftRunMs),
          l.breakdownPerStepMs.events.toFixed(1),
        ]),
      ),
    );
  }
  return parts.join('\n') + '\n';
}

// ---- main ----------------------------------------------------------------------------------

async function main(): Promise<void> {
  const opts = parseBenchArgs(process.argv.slice(2));
  setTimeout(() => {
    progress(`gave up after ${opts.timeoutMin} min (--timeout-min); killing the server and workers`);
    process.exit(2); // the exit hooks SIGKILL every child, the dev server included
  }, opts.timeoutMin * 60_000).unref();
  const startedAt = new Date().toISOString();
  fs.mkdirSync(opts.outDir, { recursive: true });
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-bench-'));
  const loadStart = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  progress(`mode ${opts.mode}, phases ${opts.phases.join(',')}; logs in ${logDir}; load avg ${loadStart}`);

  // Workers load the workflow bundle `npm run build` made; without it each would bundle at start.
  for (const { file } of PREBUILT_BUNDLES) {
    const stale = bundleStaleness(file);
    if (stale) throw new Error(`${path.relative(process.cwd(), file)} ${stale}: run \`npm run build\` first`);
  }

  const cliPath = await findOrBuildTemporalCli();
  const temporalVersion = (await execFileP(cliPath, ['--version'])).stdout.trim();
  const extraArgs = [
    ...opts.dynamicConfig.flatMap((kv) => ['--dynamic-config-value', kv]),
    ...opts.sqlitePragmas.flatMap((kv) => ['--sqlite-pragma', kv]),
    ...opts.serverArgs,
    '--headless',
  ];
  let server: TemporalServerHandle & { stopAll?: () => Promise<void> };
  let serverVersion = temporalVersion;
  if (opts.server === 'postgres') {
    progress('starting PostgreSQL and the multi-service Temporal server (deploy/temporal/production.yaml)');
    // A folder of its own (the log folder is private to us; PostgreSQL runs as another user).
    const pg = await startPostgresServer({
      log: (line) => progress(line),
      deployDir: opts.deployDir,
      postgresSettings: opts.postgresSettings,
    });
    server = pg;
    serverVersion = `temporal server ${pg.version} on PostgreSQL`;
  } else {
    progress(`starting a dev server (${temporalVersion}) ${extraArgs.join(' ')}`);
    server = await startDevServer({ cliPath, dbFile: path.join(logDir, 'temporal.sqlite'), extraArgs });
  }
  const scenarios = new Map<string, ScenarioOptions>();
  const llm = await ScriptedLlmServer.start({
    defaultScript: scenarioScript((workflowId) => scenarios.get(workflowId) ?? { steps: 1, delayMs: 0 }),
  });
  let dataConverter: DataConverter | undefined;
  if (opts.codec) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    dataConverter = (require(opts.codec) as { dataConverter?: DataConverter }).dataConverter;
    if (!dataConverter) throw new Error(`${opts.codec} exports no dataConverter`);
  }
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace, ...(dataConverter ? { dataConverter } : {}) });
  const ctx: Ctx = { opts, server, llm, client, scenarios, logDir, workerCount: 0 };

  const report: Report = {
    label: opts.label,
    startedAt,
    durationS: 0,
    conditions: {},
    options: opts,
  };
  try {
    if (opts.phases.includes('overhead')) report.overhead = await phaseOverhead(ctx);
    if (opts.phases.includes('throughput')) report.throughput = await phaseThroughput(ctx);
    if (opts.phases.includes('history')) {
      report.history = await phaseHistory(ctx);
      report.historyWithCodec = opts.codec
        ? 'this run used --codec: the rows above are with the codec'
        : 'n/a: no payload codec on this branch yet (security issue); rerun with --codec <module exporting dataConverter>';
    }
    if (opts.phases.includes('payload')) report.payload = payloadSizes();
    if (opts.phases.includes('cancel')) report.cancel = await phaseCancel(ctx);
    if (opts.phases.includes('crash')) report.crash = await phaseCrash(ctx);
    if (opts.phases.includes('limiter')) report.limiter = await phaseLimiter(ctx);
    if (opts.phases.includes('start')) {
      progress(`start: \`node dist/worker/main.js\` until it polls, ${opts.startTrials} processes`);
      report.workerStart = await measureWorkerStart({
        connection,
        namespace: server.namespace,
        runs: opts.startTrials,
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: server.address,
          TEMPORAL_NAMESPACE: server.namespace,
          OPENAI_BASE_URL: llm.baseUrl,
          OPENAI_API_KEY: 'bench',
        },
      });
    }
    if (opts.phases.includes('cli')) {
      progress('cli: cold start of `agent list -o json`, 9 processes');
      const env = { ...process.env, TEMPORAL_ADDRESS: ctx.server.address, TEMPORAL_NAMESPACE: ctx.server.namespace };
      report.cli = await measureCliColdStart({ runs: 9, env });
    }
  } finally {
    await connection.close().catch(() => undefined);
    await llm.close();
    await (server.stopAll ?? server.stop)();
  }

  report.durationS = (Date.now() - t0) / 1000;
  report.conditions = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model?.trim() ?? 'unknown',
    memGiB: (os.totalmem() / 1024 ** 3).toFixed(1),
    loadStart,
    loadEnd: os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
    node: process.version,
    temporal: serverVersion,
    sdk: (
      JSON.parse(fs.readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string }
    ).version,
  };
  const md = markdown(report);
  const json = JSON.stringify(report, (_k, v) => (v instanceof Map ? Object.fromEntries(v) : v), 2);
  const names = ['bench', ...(opts.label ? [`bench-${opts.label}`] : [])];
  for (const name of names) {
    fs.writeFileSync(path.join(opts.outDir, `${name}.json`), json + '\n');
    fs.writeFileSync(path.join(opts.outDir, `${name}.md`), md);
  }
  console.log(`\nConditions: ${conditionsLine(report)}\n`);
  console.log(textTable(HEADER, rows(report)));
  console.log(
    `\nwritten: ${names.map((n) => path.relative(process.cwd(), path.join(opts.outDir, `${n}.{json,md}`))).join(', ')}`,
  );
  fs.rmSync(logDir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    // A bad flag is the user's mistake (one line, exit 2); anything else is ours (the stack).
    if (err instanceof Error && err.message.startsWith('bench: ')) {
      console.error(`${err.message} (npm run bench -- --help)`);
      process.exit(2);
    }
    progress(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
