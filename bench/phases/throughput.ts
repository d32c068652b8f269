// Phase `throughput`: C concurrent runs on one worker; what it sustains and what that costs.
import type { TemporalEnv } from '../../runtime/temporal-env';
import { mapPool } from '../../client/concurrency';
import { envFor, newId, runInput, startWorker } from '../context';
import type { BenchWorker, Ctx } from '../context';
import { ok, runDurable, startAll } from '../durable-run';
import type { DurableRun } from '../durable-run';
import { progress } from '../process';
import { pgCommits, procRssBytes, serverCpuMs } from '../server-load';
import { bytes, ms, summarize } from '../stats';
import type { Summary, WorkerStats } from '../stats';

export interface ThroughputTrial {
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

/** Counters read before and after the concurrent runs. */
interface Gauges {
  worker: WorkerStats;
  server: number;
  commits: number | undefined;
}

export async function phaseThroughput(ctx: Ctx): Promise<ThroughputTrial[]> {
  const out: ThroughputTrial[] = [];
  for (const c of ctx.opts.concurrency) {
    for (let trial = 0; trial < ctx.opts.throughputTrials; trial++) {
      const tq = newId(`tp${c}-tq`);
      const worker = startWorker(ctx, tq, `throughput-${c}`);
      try {
        await worker.readyAt;
        const t = await throughputTrial(ctx, envFor(ctx, tq), worker, c, trial);
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

async function throughputTrial(
  ctx: Ctx,
  env: TemporalEnv,
  worker: BenchWorker,
  c: number,
  trial: number,
): Promise<ThroughputTrial> {
  const { opts } = ctx;
  // One run first: a fresh worker's first workflow task loads the bundle into its V8 context,
  // a one-off cost (about 1 s of CPU here) that would otherwise be charged to C=1.
  const warmId = newId(`tp${c}-warmup`);
  ctx.scenarios.set(warmId, { steps: opts.steps, delayMs: 0 });
  await runDurable(ctx, env, warmId, runInput(ctx, opts.steps));
  const ids = Array.from({ length: c }, () => newId(`tp${c}`));
  for (const id of ids) ctx.scenarios.set(id, { steps: opts.steps, delayMs: opts.throughputLatency });
  const before: Gauges = {
    worker: await worker.stats(),
    server: serverCpuMs(ctx.server),
    commits: await pgCommits(ctx.server),
  };
  const self0 = process.cpuUsage();
  const start = performance.now();
  let done = 0;
  let maxServerRss = procRssBytes(ctx.server.pid);
  const ticker = setInterval(() => {
    maxServerRss = Math.max(maxServerRss, procRssBytes(ctx.server.pid));
    void worker.stats().then(
      (s) => progress(`throughput C=${c} trial ${trial + 1}: ${done}/${c} runs done, worker RSS ${bytes(s.rssBytes)}`),
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
  const after: Gauges = {
    worker: await worker.stats(),
    server: serverCpuMs(ctx.server),
    commits: await pgCommits(ctx.server),
  };
  const self = process.cpuUsage(self0);
  const trialOf = {
    c,
    latencyMs: opts.throughputLatency,
    wall,
    serverRss: maxServerRss,
    selfCpuMs: (self.user + self.system) / 1000,
  };
  return trialResult(runs, opts.steps, trialOf, { before, after }, await overloadSigns(ctx, runs));
}

/**
 * Signs of overload in the histories: workflow tasks that timed out (sticky queue
 * schedule-to-start, or too slow) and activity retries (e.g. missed heartbeats).
 */
async function overloadSigns(ctx: Ctx, runs: DurableRun[]): Promise<{ wftTimeouts: number; activityRetries: number }> {
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
  return { wftTimeouts, activityRetries };
}

function trialResult(
  runs: DurableRun[],
  runSteps: number,
  t: { c: number; latencyMs: number; wall: number; serverRss: number; selfCpuMs: number },
  { before, after }: { before: Gauges; after: Gauges },
  signs: { wftTimeouts: number; activityRetries: number },
): ThroughputTrial {
  const good = runs.filter((r) => ok(r, runSteps));
  const steps = runs.reduce((n, r) => n + (r.result?.usage.steps ?? 0), 0);
  const workerCpuMs =
    (after.worker.cpuUserUs + after.worker.cpuSystemUs - before.worker.cpuUserUs - before.worker.cpuSystemUs) / 1000;
  const serverMs = after.server - before.server;
  return {
    concurrency: t.c,
    latencyMs: t.latencyMs,
    wallMs: t.wall,
    runsPerSec: (good.length * 1000) / t.wall,
    stepsPerSec: (steps * 1000) / t.wall,
    failed: runs.length - good.length,
    runMs: summarize(runs.map((r) => r.ms)),
    workerCpuPct: (workerCpuMs / t.wall) * 100,
    workerPeakRssBytes: after.worker.maxRssBytes,
    serverCpuPct: (serverMs / t.wall) * 100,
    serverRssBytes: t.serverRss,
    benchCpuPct: (t.selfCpuMs / t.wall) * 100,
    cpuPerStepMs: {
      worker: workerCpuMs / Math.max(1, steps),
      server: serverMs / Math.max(1, steps),
      bench: t.selfCpuMs / Math.max(1, steps),
    },
    ...signs,
    ...(before.commits !== undefined && after.commits !== undefined
      ? { dbCommitsPerStep: (after.commits - before.commits) / Math.max(1, steps) }
      : {}),
    errors: [
      ...new Set(runs.filter((r) => !ok(r, runSteps)).map((r) => r.error ?? `stop_reason ${r.result?.stop_reason}`)),
    ].slice(0, 5),
  };
}
