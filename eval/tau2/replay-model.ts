// The replay agent: a scripted model that answers each decision with the next call of the task's
// replay plan (replay-plan.ts), then a final answer. Where it is in the plan comes from the request
// alone (the decision payload's count of completed steps, whose last step must be the plan's
// previous call), so a retried decision or a decision replayed on another worker gets the same
// answer, and a run that went off the plan says so instead of going on blindly.
import { callSignature } from './replay-plan';
import type { PlannedCall, ReplayPlan } from './replay-plan';
import type { RecordedRequest, Reply, Script } from '../../offline-model/scripted-llm-server';
import { final, tool } from '../../offline-model/scripted-replies';
import { requestView } from '../../offline-model/request-view';

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

/** What the decision's request showed: its steps and their count (offline-model/request-view.ts reads either form). */
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

export interface ChatMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: Array<{ function?: { name?: unknown; arguments?: unknown } }>;
}

/** Native tool calling's final answer and escalation functions (docs/model-protocol.md). */
export const FINAL_FUNCTION = 'final_answer';
const ESCALATE_FUNCTION = 'escalate';

/** The plan's move for a request in either form: native (it offers `tools`) or a JSON decision payload. */
export function moveOf(plan: ReplayPlan, req: Pick<RecordedRequest, 'body'>): ReturnType<typeof replayMove> {
  const body = req.body as { tools?: unknown; messages?: unknown } | undefined;
  if (!Array.isArray(body?.tools)) return replayMove(plan, payloadOf(req));
  return nativeMove(plan, Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : []);
}

/** Native mode: the plan's position is the number of tool calls the conversation already shows. */
export function nativeMove(
  plan: ReplayPlan,
  messages: readonly ChatMessage[],
): { call: PlannedCall } | { final: true } | { off: string } {
  const calls = messages.flatMap((m) =>
    m.role === 'assistant' && Array.isArray(m.tool_calls)
      ? m.tool_calls.filter((c) => c.function?.name !== FINAL_FUNCTION && c.function?.name !== ESCALATE_FUNCTION)
      : [],
  );
  const done = calls.length;
  if (done > 0) {
    const last = calls[done - 1]!.function;
    const expected = plan.calls[done - 1];
    let args: unknown;
    try {
      args = typeof last?.arguments === 'string' ? JSON.parse(last.arguments) : last?.arguments;
    } catch {
      args = undefined;
    }
    const same =
      expected !== undefined &&
      typeof last?.name === 'string' &&
      typeof args === 'object' &&
      args !== null &&
      callSignature(last.name, args as Record<string, unknown>) === callSignature(expected.name, expected.args);
    if (!same) return { off: `after ${done} calls the last one is not the plan's call ${done}` };
  }
  const call = plan.calls[done];
  return call ? { call } : { final: true };
}

/** The scripted model's script for one run of the plan (the server answers an action as a tool call when tools are offered). */
export function replayScript(plan: ReplayPlan): Script {
  return (req): Reply => {
    const move = moveOf(plan, req);
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
