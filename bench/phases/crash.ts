// Phase `crash`: a worker SIGKILLed mid-decide; how long until the run moves on.
import { tsToMs } from '@temporalio/common/lib/time';
import { runResult, startRun } from '../../client/agent-client';
import type { RecordedRequest } from '../../offline-model/scripted-llm-server';
import { eventTypeName } from '../breakdown';
import { envFor, newId, runInput, startWorker } from '../context';
import type { BenchWorker, Ctx } from '../context';
import type { CrashMode } from '../options';
import { progress, sleep } from '../process';
import { ms, prng, secs, summarize } from '../stats';
import type { Summary } from '../stats';

export interface CrashTrial {
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

export interface CrashModeReport {
  recoveryMs: Summary;
  readyToRetryMs: Summary;
  rerunToNextStepMs: Summary;
  killToReadyMs: Summary;
  totalMs: Summary;
  stickyTimeouts: number;
  failed: number;
}

export interface CrashReport {
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

export async function phaseCrash(ctx: Ctx): Promise<CrashReport> {
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
