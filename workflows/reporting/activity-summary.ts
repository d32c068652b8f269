// The Web UI's one-line activity summaries, with the fields of the trace's step event that are known
// when the activity is scheduled: step, decision, tool, argument digest (its first 12 hex digits,
// the trace's args_hash), policy decision and remaining budget. The observation comes later, in the
// activity's result. Runtime facts only: the model's decision_summary is its own text and stays out.
import type { ViewRef } from '../../common/model-view/model-view';
import type { Remaining } from '../../common/cost/budget';
import type { AdmittedCall } from '../agent/step';

export function decideSummary(step: number, left: Remaining, view?: ViewRef): string {
  // Compaction is never silent: the Web UI shows the summary of every decide activity.
  const compacted =
    view && view.compacted > 0
      ? ` · ${view.compacted} oldest tool results compacted (steps before ${view.compact_before})`
      : '';
  // Even compacted, the view may not fit (a small budget, a large latest result): said, never hidden.
  const over = view?.over_budget_tokens
    ? ` · view ~${view.over_budget_tokens} tokens, over its context budget of ${view.budget_tokens}`
    : '';
  return `step ${step}: decide${compacted}${over} · ${leftText(left)}`;
}

/** Only calls the gateway admitted are scheduled: their policy decision is "allowed". */
export function toolCallSummary(call: AdmittedCall, left: Remaining): string {
  return `step ${call.step}: ${call.name} (${call.argsHash}) · tool_call, policy allowed · ${leftText(left)}`;
}

function leftText(left: Remaining): string {
  const tokens = left.tokens === null ? '' : `, ${left.tokens} tokens`;
  return `left: ${left.steps} steps, ${left.tool_calls} tool calls, ${Math.floor(left.seconds)} s${tokens}`;
}
