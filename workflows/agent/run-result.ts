// How a run ends: its result (trace, history, usage, effects, what a continue-as-new chain
// omitted, wind-downs and top-ups), and the search attributes that show its status. The workflow
// (agent.ts) calls these at its ending and at each step.
import { domainOf, registryOfDomain } from '../../domains/index';
import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Budget, Usage } from '../../common/cost/budget';
import { reportedExtensions } from '../../common/cost/extend';
import type { BudgetExtension } from '../../common/cost/extend';
import { attributePairs } from '../../common/temporal/search-attributes';
import type { RunStatus } from '../../common/temporal/search-attributes';
import type { StopReason } from '../../common/stop-reasons';
import type { AgentInput, AgentResult, TraceEntry } from '../../common/types';
import type { Transcript } from '../../common/conversation/conversation';
import type { LoopState } from './run-loop';

export type Ending = Pick<AgentResult, 'status' | 'stop_reason'> & Partial<AgentResult>;

export interface RunTotals {
  budget: Budget;
  omitted: { trace: number; history: number };
  extensions: readonly BudgetExtension[];
  /** A conversation's transcript (its last turns and counts). */
  conversation?: Transcript | undefined;
}

/** The run's result; `state.trace` gets its wind-down marks first. */
export function resultOf(ending: Ending, state: LoopState, totals: RunTotals): AgentResult {
  state.trace = withWindDowns(state);
  const lastWindDown = [...state.windDowns].at(-1);
  const { extensions } = totals;
  const omitted = { ...totals.omitted };
  const { trace, history } = bounded(state.trace, state.history, omitted);
  return {
    ...ending,
    trace,
    history,
    usage: state.usage,
    budget: totals.budget,
    effects: state.effects,
    ...(omitted.trace + omitted.history > 0 ? { omitted } : {}),
    ...(lastWindDown ? { wind_down: { step: lastWindDown[0], reason: lastWindDown[1] } } : {}),
    ...(extensions.length > 0 ? { extensions: reportedExtensions(extensions) } : {}),
    ...(totals.conversation ? { conversation: totals.conversation } : {}),
  };
}

/**
 * Temporal refuses a result over its payload limit (2 MiB) and the server then terminates the run
 * with no result at all: the result keeps its history and trace under this many characters (2 MiB
 * even at 3 bytes a character), dropping the oldest entries first (counted in `omitted`).
 */
export const RESULT_MAX_CHARS = 600_000;

function bounded<T, H>(
  trace: T[],
  history: H[],
  omitted: { trace: number; history: number },
): { trace: T[]; history: H[] } {
  const size = (x: unknown) => JSON.stringify(x).length + 1;
  const historySizes = history.map(size);
  const traceSizes = trace.map(size);
  let chars = historySizes.reduce((n, c) => n + c, 0) + traceSizes.reduce((n, c) => n + c, 0);
  let h = 0;
  let t = 0;
  // History first (the model's inputs), then the trace; the latest entry of each stays.
  while (chars > RESULT_MAX_CHARS && h < history.length - 1) chars -= historySizes[h++]!;
  while (chars > RESULT_MAX_CHARS && t < trace.length - 1) chars -= traceSizes[t++]!;
  omitted.history += h;
  omitted.trace += t;
  return { trace: t > 0 ? trace.slice(t) : trace, history: h > 0 ? history.slice(h) : history };
}

/** The trace with the entries of wind-down steps carrying the reason. */
export function withWindDowns(state: Pick<LoopState, 'trace' | 'windDowns'>): TraceEntry[] {
  if (state.windDowns.size === 0) return state.trace;
  return state.trace.map((entry) => {
    const reason = state.windDowns.get(entry.step);
    return reason && !entry.wind_down ? { ...entry, wind_down: reason } : entry;
  });
}

/** Keeps the run's search attributes current, with the values that changed (a no-op unless the namespace has them); `mcpTools`: its MCP tools' names. */
export function publishStatus(
  input: AgentInput,
  usage: Usage,
  status: RunStatus,
  stopReason?: StopReason,
  principal = input.principal,
  mcpTools?: ReadonlySet<string>,
): void {
  if (input.search_attributes !== true) return;
  const pairs = attributePairs(
    { status, stopReason, step: usage.steps, toolCalls: usage.tool_calls, principal },
    registryOfDomain(domainOf(input)),
    mcpTools,
  );
  // The run's current values (set at start, carried over by continue-as-new, upserted since).
  const current = workflowInfo().typedSearchAttributes;
  const changed = pairs.filter((pair) => current.get(pair.key) !== pair.value);
  if (changed.length > 0) upsertSearchAttributes(changed);
}
