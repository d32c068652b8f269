// What a tool call run as a local activity echoes of its input. A local activity's history is one
// MarkerRecorded event with its result, not its input (Temporal records no input for it), so the
// tool's step tag, arguments and idempotency key travel back in the result: `agent trace` and the evaluation read
// them there (client/history/read-history.ts). The workflow takes the echo off before the
// observation goes anywhere else: the model, the trace and the result never see it.
import type { Observation } from '../types';
import type { StepTag } from './step-tag';
import { stepTagOf } from './step-tag';

/** The marker name the SDK's core gives a local activity's MarkerRecorded event. */
export const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** The echo's field in a local tool call's result. */
export const LOCAL_CALL_FIELD = 'local_call';

export interface LocalCallEcho {
  trace: StepTag;
  args: Record<string, unknown>;
  idempotency_key?: string;
}

/** The observation with the call's step tag and arguments, as a local activity returns it. */
export function withLocalCall(
  observation: Observation,
  input: { trace?: unknown; args: Record<string, unknown>; idempotency_key: string },
): Observation {
  const trace = stepTagOf(input);
  if (!trace) return observation;
  const echo: LocalCallEcho = { trace, args: input.args, idempotency_key: input.idempotency_key };
  return { ...observation, [LOCAL_CALL_FIELD]: echo } as Observation;
}

/** The observation without the echo (the workflow's view of a local call's result). */
export function withoutLocalCall(result: Observation): Observation {
  if (typeof result !== 'object' || result === null || !(LOCAL_CALL_FIELD in result)) return result;
  const observation = { ...result } as Record<string, unknown>;
  delete observation[LOCAL_CALL_FIELD];
  return observation as unknown as Observation;
}

/** The echo in a decoded local activity result, if it carries a well-formed one. */
export function localCallOf(result: unknown): LocalCallEcho | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const echo = (result as Record<string, unknown>)[LOCAL_CALL_FIELD] as
    { trace?: unknown; args?: unknown; idempotency_key?: unknown } | undefined;
  if (typeof echo !== 'object' || echo === null) return undefined;
  const trace = stepTagOf(echo);
  const args = echo.args;
  if (!trace || typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  const key = echo.idempotency_key;
  return { trace, args: args as Record<string, unknown>, ...(typeof key === 'string' ? { idempotency_key: key } : {}) };
}
