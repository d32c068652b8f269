// The AgentWaiting search attribute: what the run waits for now (the operator's inbox, `agent list
// --waiting`). Upserted on every change and `none` at the end. Optional: the client sets it to
// `none` at the start only where the namespace has it registered, so a run that started without
// it never upserts it (an unregistered attribute would fail its workflow task again and again).
import { patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { AGENT_WAITING } from '../../common/temporal/search-attributes';
import type { WaitKind } from '../../common/temporal/waiting';
import { WAITING_ATTRIBUTE_PATCH } from './patches';

/** Sets AgentWaiting to `kind` if the run has the attribute and it says something else. */
export function publishWaiting(searchAttributes: boolean | undefined, kind: WaitKind): void {
  if (searchAttributes !== true) return;
  // Set at the start (by the client) and carried over by continue-as-new, or absent for good.
  const current = workflowInfo().typedSearchAttributes.get(AGENT_WAITING);
  if (current === undefined || current === kind) return;
  // Runs in flight from before replay without these upserts (workflows/agent/patches.ts).
  if (!patched(WAITING_ATTRIBUTE_PATCH)) return;
  upsertSearchAttributes([{ key: AGENT_WAITING, value: kind }]);
}
