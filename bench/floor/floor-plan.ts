// What the floor workflow runs (bench/floor/floor-workflow.ts): per step, the decide input an agent
// run of the same scenario scheduled (read from its history, without its model-view reference, so
// the activity renders the payload alone and queries no workflow) and the tool call it made.
import type { DecideInput, ToolInput } from '../../common/types';
import type { HistoryEvent } from '../../client/history/read-history';
import { scenarioAction } from '../scenario';

export interface FloorStep {
  decide: DecideInput;
  tool?: { name: string; input: ToolInput };
}

/** The floor's steps from an agent run's decide inputs (decoded, in order) of a `steps`-step scenario. */
export function floorPlan(decideInputs: readonly DecideInput[], steps: number, principal: string): FloorStep[] {
  return decideInputs.slice(0, steps).map((decide, i) => {
    const { view: _view, ...alone } = decide;
    const action = scenarioAction(i + 1, steps) as { kind: string; name?: string; args?: Record<string, unknown> };
    if (action.kind !== 'tool') return { decide: alone };
    const input: ToolInput = { args: action.args!, idempotency_key: '', principal };
    return { decide: alone, tool: { name: action.name!, input } };
  });
}

/** The decide activity inputs a history scheduled, in order (still encoded). */
export function decidePayloads(events: readonly HistoryEvent[]) {
  return events.flatMap((e) => {
    const s = e.activityTaskScheduledEventAttributes;
    return s?.activityType?.name === 'decide' ? [s.input?.payloads] : [];
  });
}
