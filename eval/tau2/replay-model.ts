// The replay agent: a scripted model that answers each decision with the next call of the task's
// replay plan (replay-plan.ts), then a final answer. Where it is in the plan comes from the request
// alone (the decision payload's count of completed steps, whose last step must be the plan's
// previous call), so a retried decision or a decision replayed on another worker gets the same
// answer, and a run that went off the plan says so instead of going on blindly.
import { callSignature } from './replay-plan';
import type { PlannedCall, ReplayPlan } from './replay-plan';
import type { RecordedRequest, Reply, Script } from '../../testing/scripted-llm-server';
import { final, tool } from '../../testing/scripted-replies';
import { requestView } from '../../testing/request-view';

/** Claims nothing (no number, no identifier): the final validator has nothing to check. */
export const REPLAY_FINAL_ANSWER = 'Everything you asked for is taken care of. Thank you for contacting us.';
/** The answer of a run that went off the plan (its end state will not match: the report says so). */
export const REPLAY_OFF_PLAN_ANSWER = 'The replay went off its plan and stopped here.';

interface PayloadView {
  state_summary?: { steps_completed?: unknown };
  untrusted_observations?: {
    steps?: Array<{ step?: unknown; action?: { kind?: unknown; name?: unknown; args?: unknown } }>;
  };
}

/** What the decision's request showed: its steps and their count (testing/request-view.ts reads either form). */
export function payloadOf(req: Pick<RecordedRequest, 'body'>): PayloadView | undefined {
  return requestView(req.body);
}

/** The plan's move for a decision: the next call, the final answer, or why the run is off the plan. */
export function replayMove(
  plan: ReplayPlan,
  payload: PayloadView | undefined,
): { call: PlannedCall } | { final: true } | { off: string } {
  const done = payload?.state_summary?.steps_completed;
  if (typeof done !== 'number' || !Number.isInteger(done) || done < 0) return { off: 'no step count in the request' };
  if (done > 0) {
    const last = payload?.untrusted_observations?.steps?.at(-1)?.action;
    const expected = plan.calls[done - 1];
    if (!expected || last?.kind !== 'tool' || !sameCall(last.name, last.args, expected))
      return { off: `after ${done} steps the last one is not the plan's call ${done} (${expected?.name ?? 'none'})` };
  }
  const call = plan.calls[done];
  return call ? { call } : { final: true };
}

/** The scripted model's script for one run of the plan. */
export function replayScript(plan: ReplayPlan): Script {
  return (req): Reply => {
    const move = replayMove(plan, payloadOf(req));
    if ('call' in move) return tool(move.call.name, move.call.args);
    if ('final' in move) return final(REPLAY_FINAL_ANSWER);
    // Claim-free as well, or the final validator would bounce it and ask again.
    return final(REPLAY_OFF_PLAN_ANSWER);
  };
}

function sameCall(name: unknown, args: unknown, call: PlannedCall): boolean {
  if (typeof name !== 'string' || typeof args !== 'object' || args === null) return false;
  return callSignature(name, args as Record<string, unknown>) === callSignature(call.name, call.args);
}
