// Phase `overhead`: what durability costs per step. The same scripted run, alternately as a durable
// workflow on a bench worker and as the plain loop in a forked process (bench/baseline.ts).
import { fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentInput } from '../../common/types';
import type { TemporalEnv } from '../../runtime/temporal-env';
import type { InProcessReply } from '../baseline';
import { breakdown } from '../breakdown';
import type { Breakdown } from '../breakdown';
import { envFor, newId, runInput, startWorker } from '../context';
import type { BenchWorker, Ctx } from '../context';
import { ok, runDurable } from '../durable-run';
import type { DurableRun } from '../durable-run';
import { children, DIST, progress, sleep } from '../process';
import { serverCpuMs, serverEagerActivities } from '../server-load';
import { median, ms, summarize } from '../stats';
import type { Summary, WorkerStats } from '../stats';

export interface OverheadLevel {
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

/** The forked in-process loop: runs on request, reports its CPU. */
interface InProcessLoop {
  ready: Promise<void>;
  run(id: string, input: AgentInput): Promise<InProcessReply>;
  stats(): Promise<WorkerStats>;
  stop(): Promise<void>;
}

/** The durable side, the in-process side, and what a level measures with them. */
interface Sides {
  ctx: Ctx;
  env: TemporalEnv;
  worker: BenchWorker;
  inproc: InProcessLoop;
}

const cpuMs = (s: WorkerStats) => (s.cpuUserUs + s.cpuSystemUs) / 1000;

function startInProcessLoop(ctx: Ctx): InProcessLoop {
  // Its activity log lines go to a file, as the worker's do (same logger, same cost).
  const inprocLog = fs.openSync(path.join(ctx.logDir, 'in-process-baseline.log'), 'a');
  const inproc = fork(path.join(DIST, 'bench', 'baseline.js'), [], {
    env: { ...process.env, OPENAI_BASE_URL: ctx.llm.baseUrl, OPENAI_API_KEY: 'bench', OPENAI_TIMEOUT_SECONDS: '120' },
    stdio: ['ignore', inprocLog, inprocLog, 'ipc'],
  });
  children.add(inproc);
  const inprocExited = new Promise<void>((r) => inproc.once('exit', () => (children.delete(inproc), r())));
  const waiting = new Map<string, (r: InProcessReply) => void>();
  const ready = new Promise<void>((resolve) => {
    inproc.on('message', (m: { type: 'ready' } | InProcessReply) => {
      if (m.type === 'ready') resolve();
      else if (m.type === 'done') waiting.get(m.workflowId)?.(m);
    });
  });
  const statsWaiters: Array<(s: WorkerStats) => void> = [];
  inproc.on('message', (m: WorkerStats) => {
    if (m?.type === 'stats') statsWaiters.shift()?.(m);
  });
  return {
    ready,
    run: (id, input) =>
      new Promise<InProcessReply>((resolve) => {
        waiting.set(id, resolve);
        inproc.send({ type: 'run', workflowId: id, input });
      }),
    stats: () =>
      new Promise<WorkerStats>((resolve) => {
        statsWaiters.push(resolve);
        inproc.send({ type: 'stats' });
      }),
    stop: async () => {
      inproc.disconnect();
      await Promise.race([inprocExited, sleep(5000)]);
      inproc.kill('SIGKILL');
    },
  };
}

export async function phaseOverhead(ctx: Ctx): Promise<OverheadLevel[]> {
  const tq = newId('overhead-tq');
  const worker = startWorker(ctx, tq, 'overhead');
  const inproc = startInProcessLoop(ctx);
  const sides: Sides = { ctx, env: envFor(ctx, tq), worker, inproc };
  try {
    await Promise.all([worker.readyAt, inproc.ready]);
    const levels: OverheadLevel[] = [];
    for (const latency of ctx.opts.latencies) levels.push(await overheadLevel(sides, latency));
    return levels;
  } finally {
    await inproc.stop();
    await worker.stop();
  }
}

/** One trial: the same run on both sides, which side goes first alternating. */
async function overheadTrial(
  { ctx, env, inproc }: Sides,
  latency: number,
  trial: number,
): Promise<{ d: DurableRun; i: InProcessReply }> {
  const { opts } = ctx;
  const dId = newId(`overhead-d${latency}`);
  const iId = newId(`overhead-i${latency}`);
  ctx.scenarios.set(dId, { steps: opts.steps, delayMs: latency });
  ctx.scenarios.set(iId, { steps: opts.steps, delayMs: latency });
  const input = runInput(ctx, opts.steps);
  // Alternate which side goes first, so drift in machine load hits both alike.
  if (trial % 2 === 0) {
    const d = await runDurable(ctx, env, dId, input);
    return { d, i: await inproc.run(iId, input) };
  }
  const i = await inproc.run(iId, input);
  return { d: await runDurable(ctx, env, dId, input), i };
}

interface LevelRuns {
  durable: number[];
  local: number[];
  perStep: number[];
  measured: DurableRun[];
  failed: number;
  cpu0: { worker: number; inproc: number; server: number };
  eager0: number | undefined;
}

/** The warm-up trials, then the measured ones; the CPU baseline is taken between them. */
async function levelRuns(sides: Sides, latency: number): Promise<LevelRuns> {
  const { ctx, worker, inproc } = sides;
  const { opts } = ctx;
  const r: LevelRuns = {
    durable: [],
    local: [],
    perStep: [],
    measured: [],
    failed: 0,
    cpu0: { worker: 0, inproc: 0, server: 0 },
    eager0: undefined,
  };
  for (let trial = 0; trial < opts.warmup + opts.trials; trial++) {
    if (trial === opts.warmup) {
      // Before the CPU baseline: the wait for the server's metrics is idle time, not a step's.
      r.eager0 = await serverEagerActivities(ctx.server);
      r.cpu0 = {
        worker: cpuMs(await worker.stats()),
        inproc: cpuMs(await inproc.stats()),
        server: serverCpuMs(ctx.server),
      };
    }
    const { d, i } = await overheadTrial(sides, latency, trial);
    const good = ok(d, opts.steps) && i.stop_reason === 'success' && i.steps === opts.steps;
    if (trial < opts.warmup) continue;
    if (!good) {
      r.failed++;
      progress(
        `overhead: failed trial at ${latency} ms: durable ${d.error ?? d.result?.stop_reason} after ` +
          `${d.result?.usage.steps ?? '?'} step(s), in-process ${i.error ?? i.stop_reason} after ${i.steps} step(s)`,
      );
      continue;
    }
    r.durable.push(d.ms);
    r.local.push(i.ms);
    r.perStep.push((d.ms - i.ms) / opts.steps);
    r.measured.push(d);
  }
  return r;
}

async function overheadLevel(sides: Sides, latency: number): Promise<OverheadLevel> {
  const { ctx, worker, inproc } = sides;
  const { opts } = ctx;
  const r = await levelRuns(sides, latency);
  // CPU per step, a measure that machine load distorts far less than wall-clock time. The
  // worker and the server idle (but for polling) while the in-process loop runs, and vice versa.
  const stepsRun = Math.max(1, r.measured.length * opts.steps);
  const cpuPerStepMs = {
    worker: (cpuMs(await worker.stats()) - r.cpu0.worker) / stepsRun,
    server: (serverCpuMs(ctx.server) - r.cpu0.server) / stepsRun,
    inProcess: (cpuMs(await inproc.stats()) - r.cpu0.inproc) / stepsRun,
  };
  const eager1 = await serverEagerActivities(ctx.server);
  const breakdowns: Breakdown[] = [];
  let scheduled = 0;
  for (const d of r.measured) {
    const events = (await ctx.client.workflow.getHandle(d.id, d.runId).fetchHistory()).events ?? [];
    breakdowns.push(breakdown(events));
    scheduled += events.filter((e) => e.activityTaskScheduledEventAttributes).length;
  }
  // Failed trials' activities count in the server's counter too; they are rare and reported.
  const eagerShare =
    r.eager0 !== undefined && eager1 !== undefined && scheduled > 0 ? (eager1 - r.eager0) / scheduled : undefined;
  const level = levelOf(latency, opts.steps, r, cpuPerStepMs, breakdowns, eagerShare);
  progress(
    `overhead @${latency} ms: durable ${ms(median(r.durable))} vs in-process ${ms(median(r.local))} per ${opts.steps}-step run; ` +
      `overhead ${ms(level.overheadPerStepMs.median)}/step median, ${ms(level.overheadPerStepMs.p95)} p95 (×${level.ratio.toFixed(2)}); ` +
      `CPU/step: worker ${ms(cpuPerStepMs.worker)}, server ${ms(cpuPerStepMs.server)}, in-process ${ms(cpuPerStepMs.inProcess)}` +
      (eagerShare !== undefined ? `; activities dispatched eagerly ${(eagerShare * 100).toFixed(0)} %` : ''),
  );
  return level;
}

function levelOf(
  latency: number,
  steps: number,
  r: LevelRuns,
  cpuPerStepMs: OverheadLevel['cpuPerStepMs'],
  breakdowns: Breakdown[],
  eagerShare: number | undefined,
): OverheadLevel {
  const dMed = median(r.durable);
  const iMed = median(r.local);
  const per = (k: keyof Breakdown) => median(breakdowns.map((b) => b[k])) / steps;
  return {
    latencyMs: latency,
    steps,
    durableMs: summarize(r.durable),
    inProcessMs: summarize(r.local),
    overheadPerStepMs: summarize(r.perStep),
    ratio: dMed / iMed,
    overheadPct: ((dMed - iMed) / iMed) * 100,
    failed: r.failed,
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
}
