// `agent status ID`: Temporal's view of the run (describe) plus the agent's live state (the
// `state` query) and its effects. Queries need a worker; without one, the Temporal part is still
// shown, with the effect counts the run keeps in its memo (and an ended run's result's effects).
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { EFFECTS_MEMO } from '../../common/types';
import type { AgentState, EffectEntry } from '../../common/types';
import { existingRun, runResult, runState } from '../../client/agent-client';
import { usageText } from '../cli-args';
import { defineCommand, line, printJson, withDeadline } from '../cli-context';
import { queryFailureReason } from '../follow-run';
import { formatState, formatTime } from '../format';
import { effectCountsOf, formatEffectCounts, formatEffects } from '../format-effects';
import { runUrl } from '../../runtime/temporal-env';

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: {},
} as const;

/** How long `status` waits for a worker to answer the state query. */
const QUERY_TIMEOUT_MS = 3_000;

export const status = defineCommand({
  spec,
  usage: usageText(
    'agent status ID [-o text|json|jsonl]\n' +
      '(-o json: {workflow_id, run_id, temporal_status, task_queue, start_time, close_time, history_length, url, state, state_error?, effects, effect_counts})',
    spec,
  ),
  async run(args, ctx) {
    const workflowId = args.positionals[0]!;
    const client = await ctx.client();
    const handle = await existingRun(client, workflowId);
    const description: WorkflowExecutionDescription = await handle.describe();
    let state: AgentState | undefined;
    let stateError: string | undefined;
    try {
      state = await withDeadline(client, QUERY_TIMEOUT_MS, () => runState(handle));
    } catch (err) {
      stateError = explainQueryFailure(err, description.taskQueue);
    }
    // The live list, else an ended run's result (readable without a worker).
    let effects: EffectEntry[] | undefined = state?.effects;
    if (effects === undefined && description.status.name !== 'RUNNING') {
      effects = await withDeadline(client, QUERY_TIMEOUT_MS, () => runResult(handle))
        .then((r) => r.effects)
        .catch(() => undefined);
    }
    const counts = effectCountsOf(description.memo?.[EFFECTS_MEMO]);
    const url = runUrl(ctx.env, workflowId);

    if (ctx.output !== 'text') {
      const doc = {
        workflow_id: workflowId,
        run_id: description.runId,
        temporal_status: description.status.name,
        task_queue: description.taskQueue,
        start_time: description.startTime.toISOString(),
        close_time: description.closeTime?.toISOString() ?? null,
        history_length: description.historyLength,
        url,
        state: state ?? null,
        ...(stateError !== undefined ? { state_error: stateError } : {}),
        effects: effects ?? null,
        effect_counts: counts ?? null,
      };
      printJson(ctx, doc);
      return 0;
    }

    const out = ctx.io.stdout;
    line(out, `run:          ${workflowId}`);
    line(
      out,
      `temporal:     ${description.status.name} (run id ${description.runId}, task queue ${description.taskQueue})`,
    );
    line(out, `started:      ${formatTime(description.startTime)}`);
    line(out, `closed:       ${formatTime(description.closeTime)}`);
    line(out, `Web UI:       ${url}`);
    if (state) for (const text of formatState(liveClock(state, description), workflowId)) line(out, text);
    else line(out, `live state:   unavailable (${stateError})`);
    if (!state && effects) for (const text of formatEffects(effects)) line(out, text);
    else if (!state && counts) {
      // Only the counts: enough to see that money may have moved.
      line(out, `effects:      ${formatEffectCounts(counts)}`);
      if (counts.ambiguous > 0)
        line(
          out,
          `WARNING: ${counts.ambiguous} effect(s) AMBIGUOUS: money may have moved; check the refunds service for keys starting with ${workflowId}:`,
        );
    }
    return 0;
  },
});

/**
 * A query sees the workflow's clock as of its last task, so a run busy with a slow step reports the
 * time it had when the step began. The run says when its figure is from and whether its time runs
 * on: while it does, the time since then is added; while it waits for a person, an operator's top-up
 * or the customer, the figure stands (waits do not count toward max_seconds).
 */
function liveClock(state: AgentState, description: WorkflowExecutionDescription): AgentState {
  if (state.status !== 'running' || description.status.name !== 'RUNNING') return state;
  const elapsed = liveElapsedMs(state, description, Date.now());
  const usage = { ...state.usage, elapsed_ms: elapsed };
  return {
    ...state,
    usage,
    remaining: { ...state.remaining, seconds: Math.max(0, state.budget.max_seconds - elapsed / 1000) },
  };
}

/** The run's own time now: its figure brought up to `nowMs` while its time runs. */
export function liveElapsedMs(state: AgentState, description: WorkflowExecutionDescription, nowMs: number): number {
  const { elapsed_ms } = state.usage;
  if (state.clock)
    return state.clock.running ? elapsed_ms + Math.max(0, nowMs - Date.parse(state.clock.at)) : elapsed_ms;
  // A worker from before `clock`: the wall clock since the start, except during a wait.
  if (state.phase.startsWith('awaiting_')) return elapsed_ms;
  return Math.max(elapsed_ms, nowMs - description.startTime.getTime());
}

function explainQueryFailure(err: unknown, taskQueue: string): string {
  const { text, noWorker } = queryFailureReason(err);
  return noWorker ? `${text}; is a worker polling task queue "${taskQueue}"? (npm run worker)` : text;
}
