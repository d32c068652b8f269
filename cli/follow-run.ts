// Watch a run as it happens: poll the `state` query, report new trace entries, phase changes and
// effects (each new one, and each change of its state), and resolve with the result when the run
// ends. Used by `run --wait`, `result`, `watch` and the demo.
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { reactAgent } from '../workflows/agent/agent';
import type { AgentResult, AgentState, EffectEntry, TraceEntry } from '../common/types';
import { runResult, runState } from '../client/agent-client';
import { formatPhase, formatTraceEntry, formatUsd } from './format';
import { formatEffect } from './format-effects';

/** What following a run reports, as data (-o jsonl prints these, one per line). */
export type FollowEvent =
  | ({ type: 'step' } & TraceEntry)
  | { type: 'phase'; phase: AgentState['phase']; step: number; current_tool: string | null }
  | ({ type: 'effect' } & EffectEntry)
  /** The run's LLM cost changed (every charged attempt, failed ones included). */
  | { type: 'cost'; cost_usd: number; max_usd: number | null; charged_attempts: number };

export interface FollowOptions {
  /** Called with each progress line ("step 2: get_user_billing (feaa769a39ae) ok"). */
  onLine(text: string): void;
  /** Called with each progress event, just before its line. */
  onEvent?(event: FollowEvent): void;
  /** Called at most once if the live state cannot be read for a while (e.g. no worker yet). */
  onNoState?(message: string): void;
  pollMs?: number;
  /** Deadline of one state query; a query nobody answers would otherwise wait a long time. */
  queryTimeoutMs?: number;
  /** How long queries may fail before onNoState is called. */
  noStateAfterMs?: number;
}

export async function followRun(
  client: Client,
  handle: WorkflowHandle<typeof reactAgent>,
  opts: FollowOptions,
): Promise<AgentResult> {
  const pollMs = opts.pollMs ?? 300;
  const queryTimeoutMs = opts.queryTimeoutMs ?? 2_000;
  const noStateAfterMs = opts.noStateAfterMs ?? 3_000;

  // An ended run has no live state to poll: its result is all there is (and a query sent to it, then
  // left unanswered when the result comes first, leaves a "Query not found" WARN in the worker's log).
  let ended = (await handle.describe()).status.name !== 'RUNNING';
  const result = runResult(handle);
  const settled = result.then(
    () => {
      ended = true;
    },
    () => {
      ended = true;
    },
  );

  const progress = new Progress(opts);
  let firstFailureAt: number | undefined;
  let warned = false;

  let lastQuery: Promise<unknown> | undefined;
  while (!ended) {
    const query = client.connection.withDeadline(Date.now() + queryTimeoutMs, () => runState(handle));
    lastQuery = query.catch(() => undefined); // may settle after the run ended
    try {
      // A query that nobody answers (no worker) must not hold up a result that is already there.
      const state = await Promise.race([query, settled.then(() => undefined)]);
      if (state === undefined || ended) break;
      firstFailureAt = undefined;
      progress.show(state);
    } catch (err) {
      const now = Date.now();
      firstFailureAt ??= now;
      if (!ended && !warned && now - firstFailureAt >= noStateAfterMs && opts.onNoState) {
        warned = true;
        opts.onNoState(`live state unavailable (${queryFailureReason(err).text}); still waiting for the run to end`);
      }
    }
    if (ended) break;
    await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, pollMs))]);
  }

  const final = await result;
  // The last poll may still be on its way to a worker: wait for its answer (at most its deadline), so
  // the worker does not answer a query its asker has dropped (a "Query not found" WARN in its log).
  await lastQuery;
  // The result's trace is the authority: print whatever the polls did not catch.
  progress.showSteps(final.trace);
  // Effects are not replayed here: the result block lists them all with their final states.
  return final;
}

/** What the polls have shown so far, so that each step, effect state, cost and phase is shown once. */
class Progress {
  private printed = 0;
  private readonly effectsShown = new Set<string>();
  private lastCost: number | undefined;
  private lastPhase: string | undefined;

  constructor(private readonly opts: FollowOptions) {}

  show(state: AgentState): void {
    this.showSteps(state.trace);
    this.showEffects(state.effects);
    this.showCost(state);
    this.showPhase(state);
  }

  /** The trace entries not shown yet. */
  showSteps(trace: readonly TraceEntry[]): void {
    for (const entry of trace.slice(this.printed)) {
      this.opts.onEvent?.({ type: 'step', ...entry });
      this.opts.onLine(formatTraceEntry(entry));
    }
    this.printed = Math.max(this.printed, trace.length);
  }

  /** Each new effect, and each change of an effect's state. */
  private showEffects(effects: readonly EffectEntry[] | undefined): void {
    for (const e of effects ?? []) {
      const seen = `${e.idempotency_key}\u0000${e.state}`;
      if (this.effectsShown.has(seen)) continue;
      this.effectsShown.add(seen);
      this.opts.onEvent?.({ type: 'effect', ...e });
      this.opts.onLine(`effect: ${formatEffect(e)}`);
    }
  }

  private showCost(state: AgentState): void {
    const cost = state.usage.cost_usd;
    if (cost === undefined || cost === this.lastCost || (this.lastCost === undefined && cost === 0)) return;
    this.lastCost = cost;
    const max = state.budget.max_usd > 0 ? state.budget.max_usd : null;
    const charged = state.usage.charged_attempts ?? 0;
    this.opts.onEvent?.({ type: 'cost', cost_usd: cost, max_usd: max, charged_attempts: charged });
    this.opts.onLine(
      `cost: ${formatUsd(cost)}${max !== null ? ` of ${formatUsd(max)}` : ''} (${charged} attempt(s) charged)`,
    );
  }

  private showPhase(state: AgentState): void {
    const phase = formatPhase(state);
    if (phase !== undefined && phase !== this.lastPhase) {
      this.opts.onEvent?.({
        type: 'phase',
        phase: state.phase,
        step: state.step,
        current_tool: state.current_tool ?? null,
      });
      this.opts.onLine(phase);
    }
    this.lastPhase = phase;
  }
}

/**
 * Why a `state` query failed, in one line. The client wraps the server's answer ("Failed to query
 * Workflow"); the useful part, e.g. "no poller seen for task queue recently, worker may be down",
 * is in the gRPC cause.
 */
export function queryFailureReason(err: unknown): { text: string; noWorker: boolean } {
  const cause = (err as { cause?: { code?: unknown; details?: unknown; message?: unknown } }).cause;
  const code = typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : cause?.code;
  const detail = typeof cause?.details === 'string' && cause.details ? cause.details : undefined;
  const message = detail ?? (err instanceof Error ? err.message : String(err));
  const text = code === 4 ? 'nobody answered in time' : message.split('\n')[0]!.slice(0, 200);
  // DEADLINE_EXCEEDED: nobody answered in time; FAILED_PRECONDITION "no poller": the server knows.
  const noWorker = code === 4 || /deadline|no poller/i.test(text);
  return { text, noWorker };
}
