// Phase `cancel`: from a cancel request (client API, or the `agent cancel` CLI) to the LLM request aborted.
import fs from 'node:fs';
import path from 'node:path';
import { tsToMs } from '@temporalio/common/lib/time';
import { cancelRun, runResult, startRun } from '../../client/agent-client';
import { envFor, newId, runInput, startWorker } from '../context';
import type { Ctx } from '../context';
import { DIST, execFileP, progress, sleep } from '../process';
import { ms, prng, summarize } from '../stats';
import type { Summary } from '../stats';

export interface CancelTrial {
  via: 'api' | 'cli';
  waitBeforeCancelMs: number;
  abortMs: number;
  /** Cancel issued → the server recorded it (WorkflowExecutionCancelRequested): the CLI's share. */
  requestedMs: number;
  closedMs: number;
  ok: boolean;
}

export interface CancelSummary {
  abortMs: Summary;
  /** Absent in reports from before it was measured. */
  requestedMs?: Summary;
  closedMs: Summary;
  failed: number;
}

export interface CancelReport {
  api: CancelSummary;
  cli?: CancelSummary;
  trials: CancelTrial[];
}

export async function phaseCancel(ctx: Ctx): Promise<CancelReport> {
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
      const events = history.events ?? [];
      const closeEvent = events.find((e) => e.workflowExecutionCanceledEventAttributes);
      const closedMs = closeEvent ? tsToMs(closeEvent.eventTime) - cancelledAt : NaN;
      const requestEvent = events.find((e) => e.workflowExecutionCancelRequestedEventAttributes);
      const requestedMs = requestEvent ? tsToMs(requestEvent.eventTime) - cancelledAt : NaN;
      good = good && result?.stop_reason === 'cancelled' && closeEvent !== undefined;
      trials.push({ via, waitBeforeCancelMs: wait, abortMs, requestedMs, closedMs, ok: good });
      progress(
        `cancel ${n + 1}/${plan.length} (${via}): recorded after ${ms(requestedMs)}, LLM request aborted after ${ms(abortMs)}, run closed after ${ms(closedMs)}${good ? '' : ' (FAILED)'}`,
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
      requestedMs: summarize(good.map((t) => t.requestedMs)),
      closedMs: summarize(good.map((t) => t.closedMs)),
      failed: ts.length - good.length,
    };
  };
  return { api: sum('api'), ...(hasCli && opts.cliCancelTrials > 0 ? { cli: sum('cli') } : {}), trials };
}
