// Phase `floor`: the agent's step against Temporal's own floor on the same server, in one run. The
// floor is a bare workflow running the same two activities per step (bench/floor/floor-workflow.ts:
// the same decide inputs, the same tool calls, as normal activities); the agent is the shipped
// workflow on the shipped worker. Per step = run time (start call to result) / steps; the ratio is
// agent / floor: below 1, the agent's step costs fewer server round trips than a naive workflow's
// (read-only tools as local activities, docs/benchmark.md#read-only-tools-as-local-activities).
import type { DecideInput } from '../../common/types';
import { payloadDecoder } from '../../client/history/fetch-chain';
import { envFor, newId, runInput, startWorker } from '../context';
import type { BenchWorker, Ctx } from '../context';
import { ok, runDurable } from '../durable-run';
import type { DurableRun } from '../durable-run';
import { decidePayloads, floorPlan } from '../floor/floor-plan';
import type { FloorStep } from '../floor/floor-plan';
import { breakdown } from '../breakdown';
import type { Breakdown } from '../breakdown';
import { progress } from '../process';
import { median, ms, summarize } from '../stats';
import type { Summary, WorkerStats } from '../stats';

export interface FloorLevel {
  latencyMs: number;
  steps: number;
  agentPerStepMs: Summary;
  floorPerStepMs: Summary;
  /** median agent per step / median floor per step */
  ratio: number;
  failed: number;
  /** CPU time per step of each side's worker process */
  cpuPerStepMs: { agent: number; floor: number };
  /** history events per run, median */
  events: { agent: number; floor: number };
  /** Where each side's step went, from its histories (medians per step, server timestamps). */
  breakdownPerStepMs: { agent: StepBreakdown; floor: StepBreakdown };
  /** With --floor-before: the other build's agent, in the same rounds. */
  before?: { dist: string; perStepMs: Summary; ratio: number; cpuPerStepMs: number; events: number };
}

type StepBreakdown = Omit<Breakdown, 'events' | 'serverMs'>;

function perStep(bs: Breakdown[], steps: number): StepBreakdown {
  const per = (k: keyof StepBreakdown) => Math.round((median(bs.map((b) => b[k])) / steps) * 10) / 10;
  return {
    activityQueueMs: per('activityQueueMs'),
    decideMs: per('decideMs'),
    toolMs: per('toolMs'),
    wftQueueMs: per('wftQueueMs'),
    wftRunMs: per('wftRunMs'),
  };
}

const cpuMs = (s: WorkerStats) => (s.cpuUserUs + s.cpuSystemUs) / 1000;

interface Sides {
  ctx: Ctx;
  agent: BenchWorker;
  floor: BenchWorker;
  agentTq: string;
  floorTq: string;
  before?: { worker: BenchWorker; tq: string; dist: string };
}

export async function phaseFloor(ctx: Ctx): Promise<FloorLevel[]> {
  const agentTq = newId('floor-agent-tq');
  const floorTq = newId('floor-tq');
  const agent = startWorker(ctx, agentTq, 'floor-agent');
  const floor = startWorker(ctx, floorTq, 'floor', { BENCH_WORKFLOWS: 'floor' });
  const beforeDist = ctx.opts.floorBefore;
  const beforeTq = newId('floor-before-tq');
  const before = beforeDist ? startWorker(ctx, beforeTq, 'floor-before', {}, beforeDist) : undefined;
  try {
    await Promise.all([agent.readyAt, floor.readyAt, before?.readyAt]);
    const sides: Sides = {
      ctx,
      agent,
      floor,
      agentTq,
      floorTq,
      ...(before && beforeDist ? { before: { worker: before, tq: beforeTq, dist: beforeDist } } : {}),
    };
    const levels: FloorLevel[] = [];
    for (const latency of ctx.opts.latencies) levels.push(await floorLevel(sides, latency));
    return levels;
  } finally {
    await Promise.all([agent.stop(), floor.stop(), before?.stop()]);
  }
}

/** The floor's steps: what an agent run of the scenario sent its decide activity, step by step. */
async function planFrom(sides: Sides, latency: number): Promise<FloorStep[]> {
  const { ctx } = sides;
  const id = newId(`floor-plan${latency}`);
  ctx.scenarios.set(id, { steps: ctx.opts.steps, delayMs: latency });
  const run = await runDurable(ctx, envFor(ctx, sides.agentTq), id, runInput(ctx, ctx.opts.steps));
  if (!ok(run, ctx.opts.steps))
    throw new Error(`floor: the agent's plan run failed: ${run.error ?? run.result?.stop_reason}`);
  const events = (await ctx.client.workflow.getHandle(id, run.runId).fetchHistory()).events ?? [];
  const decode = payloadDecoder(ctx.client);
  const inputs: DecideInput[] = [];
  for (const payloads of decidePayloads(events)) inputs.push((await decode(payloads)) as DecideInput);
  return floorPlan(inputs, ctx.opts.steps, '42');
}

async function runFloor(
  sides: Sides,
  plan: FloorStep[],
  latency: number,
): Promise<{ ms: number; runId: string; id: string }> {
  const { ctx } = sides;
  const id = newId(`floor-f${latency}`);
  ctx.scenarios.set(id, { steps: ctx.opts.steps, delayMs: latency });
  const t = performance.now();
  const handle = await ctx.client.workflow.start('floorWorkflow', {
    taskQueue: sides.floorTq,
    workflowId: id,
    args: [plan],
  });
  await handle.result();
  return { ms: performance.now() - t, runId: handle.firstExecutionRunId, id };
}

function runAgent(ctx: Ctx, tq: string, latency: number): Promise<DurableRun> {
  const id = newId(`floor-a${latency}`);
  ctx.scenarios.set(id, { steps: ctx.opts.steps, delayMs: latency });
  return runDurable(ctx, envFor(ctx, tq), id, runInput(ctx, ctx.opts.steps));
}

async function historyOf(ctx: Ctx, id: string, runId: string): Promise<Breakdown> {
  return breakdown((await ctx.client.workflow.getHandle(id, runId).fetchHistory()).events ?? []);
}

async function floorLevel(sides: Sides, latency: number): Promise<FloorLevel> {
  const { ctx, agent, floor } = sides;
  const { opts } = ctx;
  const plan = await planFrom(sides, latency);
  const agentMs: number[] = [];
  const floorMs: number[] = [];
  const beforeMs: number[] = [];
  const events = { agent: [] as number[], floor: [] as number[], before: [] as number[] };
  const histories = { agent: [] as Breakdown[], floor: [] as Breakdown[] };
  const runs: Array<{ a: DurableRun; f: { id: string; runId: string }; b?: DurableRun }> = [];
  let failed = 0;
  let cpu0 = { agent: 0, floor: 0, before: 0 };
  for (let trial = 0; trial < opts.warmup + opts.trials; trial++) {
    if (trial === opts.warmup)
      cpu0 = {
        agent: cpuMs(await agent.stats()),
        floor: cpuMs(await floor.stats()),
        before: sides.before ? cpuMs(await sides.before.worker.stats()) : 0,
      };
    // Rotate which side goes first, so drift in machine load hits every side alike.
    const order: Array<() => Promise<unknown>> = [];
    let a: DurableRun | undefined;
    let f: Awaited<ReturnType<typeof runFloor>> | undefined;
    let b: DurableRun | undefined;
    order.push(async () => (a = await runAgent(ctx, sides.agentTq, latency)));
    order.push(async () => (f = await runFloor(sides, plan, latency)));
    if (sides.before) order.push(async () => (b = await runAgent(ctx, sides.before!.tq, latency)));
    for (let k = 0; k < order.length; k++) await order[(trial + k) % order.length]!();
    if (trial < opts.warmup) continue;
    if (!ok(a!, opts.steps) || (b && !ok(b, opts.steps))) {
      failed++;
      progress(`floor: failed agent run at ${latency} ms: ${a!.error ?? a!.result?.stop_reason}`);
      continue;
    }
    agentMs.push(a!.ms / opts.steps);
    floorMs.push(f!.ms / opts.steps);
    runs.push({ a: a!, f: f!, b });
    if (b) beforeMs.push(b.ms / opts.steps);
  }
  // Histories are read after the trials, so that no read runs between two measured runs.
  for (const { a, f, b } of runs) {
    histories.agent.push(await historyOf(ctx, a.id, a.runId));
    histories.floor.push(await historyOf(ctx, f.id, f.runId));
    events.agent.push(histories.agent.at(-1)!.events);
    events.floor.push(histories.floor.at(-1)!.events);
    if (b) events.before.push((await historyOf(ctx, b.id, b.runId)).events);
  }
  const stepsRun = Math.max(1, agentMs.length * opts.steps);
  const level: FloorLevel = {
    latencyMs: latency,
    steps: opts.steps,
    agentPerStepMs: summarize(agentMs),
    floorPerStepMs: summarize(floorMs),
    ratio: median(agentMs) / median(floorMs),
    failed,
    cpuPerStepMs: {
      agent: (cpuMs(await agent.stats()) - cpu0.agent) / stepsRun,
      floor: (cpuMs(await floor.stats()) - cpu0.floor) / stepsRun,
    },
    events: { agent: median(events.agent), floor: median(events.floor) },
    breakdownPerStepMs: { agent: perStep(histories.agent, opts.steps), floor: perStep(histories.floor, opts.steps) },
    ...(sides.before
      ? {
          before: {
            dist: sides.before.dist,
            perStepMs: summarize(beforeMs),
            ratio: median(beforeMs) / median(floorMs),
            cpuPerStepMs: (cpuMs(await sides.before.worker.stats()) - cpu0.before) / stepsRun,
            events: median(events.before),
          },
        }
      : {}),
  };
  report(level);
  return level;
}

const where = (b: StepBreakdown) =>
  `workflow task queued ${ms(b.wftQueueMs)} + run ${ms(b.wftRunMs)}, decide ${ms(b.decideMs)}, tools ${ms(b.toolMs)}`;

function report(level: FloorLevel): void {
  progress(
    `floor @${level.latencyMs} ms: agent ${ms(level.agentPerStepMs.median)}/step vs floor ${ms(level.floorPerStepMs.median)}/step (×${level.ratio.toFixed(2)}); ` +
      `CPU/step: agent worker ${ms(level.cpuPerStepMs.agent)}, floor worker ${ms(level.cpuPerStepMs.floor)}; ` +
      `events/run ${level.events.agent} vs ${level.events.floor}; ` +
      `per step (history): agent ${where(level.breakdownPerStepMs.agent)}, floor ${where(level.breakdownPerStepMs.floor)}` +
      (level.before
        ? `; before (${level.before.dist}): ${ms(level.before.perStepMs.median)}/step (×${level.before.ratio.toFixed(2)}), ` +
          `CPU/step ${ms(level.before.cpuPerStepMs)}, events/run ${level.before.events}`
        : ''),
  );
}
