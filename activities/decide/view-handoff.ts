// The worker's side of the view handoff (common/model-view/view-handoff.ts): the views this worker's
// workflows handed over, held until their decide activity takes them, so that a decision on the
// worker that scheduled it reads its view from memory instead of by a Query (a server round trip
// and a workflow activation). A view is taken once, for exactly the run, activity and view plan it
// was made for; anything else (another worker's, a retry, one never taken) goes by the Query.
// Bounded: at most MAX_HELD views, none older than HELD_MS (a decision dispatched elsewhere).
import type { InjectedSinks } from '@temporalio/worker';
import type { ViewHandoffSinks } from '../../common/model-view/view-handoff';
import type { ViewRef, ViewSource } from '../../common/model-view/model-view';

/** Views held at most: about one per decision in flight on this worker. */
export const MAX_HELD = 1000;
/** A view not taken within this long is dropped (its activity went to another worker). */
export const HELD_MS = 60_000;

interface Held {
  ref: string;
  view: ViewSource;
  at: number;
}

/** How decisions read their views: from a handoff, or by the model_view Query (the worker's metrics). */
export const viewReads = { handoff: 0, query: 0 };

const held = new Map<string, Held>();

function keyOf(workflowId: string, runId: string, activityId: string): string {
  return JSON.stringify([workflowId, runId, activityId]);
}

/** Holds a run's view for its decide activity; the oldest go first past MAX_HELD or HELD_MS. */
export function holdView(
  run: { workflowId: string; runId: string },
  activityId: string,
  ref: ViewRef,
  view: ViewSource,
  now = Date.now(),
): void {
  const key = keyOf(run.workflowId, run.runId, activityId);
  held.delete(key);
  held.set(key, { ref: JSON.stringify(ref), view, at: now });
  for (const [k, h] of held) {
    if (held.size <= MAX_HELD && now - h.at <= HELD_MS) break;
    held.delete(k);
  }
}

/** The view handed over for this run's activity and this plan, once; undefined: ask by the Query. */
export function takeView(
  run: { workflowId: string; runId: string },
  activityId: string,
  ref: ViewRef,
  now = Date.now(),
): ViewSource | undefined {
  const key = keyOf(run.workflowId, run.runId, activityId);
  const h = held.get(key);
  held.delete(key);
  if (!h || now - h.at > HELD_MS || h.ref !== JSON.stringify(ref)) return undefined;
  return h.view;
}

/** How many views are held now (tests). */
export function heldViews(): number {
  return held.size;
}

/** The sink the worker registers: the run is the sink's own workflow info, never the workflow's word. */
export const VIEW_HANDOFF_SINKS: InjectedSinks<ViewHandoffSinks> = {
  modelView: {
    offer: {
      fn: (info, activityId: string, ref: ViewRef, view: ViewSource) =>
        holdView({ workflowId: info.workflowId, runId: info.runId }, activityId, ref, view),
    },
  },
};
