// Phase `history`: one long run; how many events and bytes each step adds to the history.
import { chainCost } from '../history';
import type { ChainCost } from '../history';
import { envFor, newId, runInput, startWorker } from '../context';
import type { Ctx } from '../context';
import { runDurable } from '../durable-run';
import { progress } from '../process';
import { bytes } from '../stats';

export interface HistoryReport {
  steps: number;
  continueAsNewEvery: number | 'default';
  runs: ChainCost['runs'];
  at: Array<{ step: number; events: number; bytes: number; decideInputBytes: number }>;
  /** bytes per step at the last reported step / at the first */
  growth: number;
  meanStepBytes: number;
  result: string;
}

export async function phaseHistory(ctx: Ctx): Promise<HistoryReport> {
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
