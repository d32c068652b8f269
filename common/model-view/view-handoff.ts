// The decide activity reads the run's view (model-view.ts) by the model_view Query: a server round
// trip and a workflow activation per decision. When the activity runs on the worker whose workflow
// scheduled it (eager dispatch: nearly always), the workflow has already handed it the Query's answer
// through this sink, in memory (activities/decide/view-handoff.ts); the Query stays for an activity
// on another worker, a retry and a restart. A sink emits no command and is not recorded: the history
// is the same either way. Not offered while a history is replayed (the activity ran long ago).
import { proxySinks, workflowInfo } from '@temporalio/workflow';
import type { Sinks } from '@temporalio/workflow';
import type { ViewRef, ViewSource } from './model-view';

export interface ViewHandoffSinks extends Sinks {
  modelView: {
    /** The model_view Query's answer for `ref`, for the decide activity `activityId` of this run. */
    offer(activityId: string, ref: ViewRef, view: ViewSource): void;
  };
}

const { modelView } = proxySinks<ViewHandoffSinks>();

/** Hands the decide activity `activityId` its view, computed now (`view()`), unless replaying. */
export function offerView(activityId: string, ref: ViewRef, view: () => ViewSource): void {
  if (workflowInfo().unsafe.isReplaying) return;
  modelView.offer(activityId, ref, view());
}
