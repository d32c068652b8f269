// Why a run has not ended some time after it was cancelled, in one line an operator can act on.
// A cancel is processed by a workflow task on a worker: with no worker, or with workflow code
// that fails every task, it never is, and only `agent cancel ID --terminate` ends the run.
import type { Client } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';

const { TaskQueueKind, TaskQueueType, PendingWorkflowTaskState } = temporal.api.enums.v1;

/** A worker that polls takes a new workflow task within milliseconds; the sticky queue of a dead one holds it 2 s. */
const UNSTARTED_MS = 3_000;
/** A live worker's long polls reach the server at least once a minute (the server ends a poll after 60 s). */
const SILENT_POLLERS_MS = 70_000;

export interface StuckFacts {
  taskQueue: string;
  /** Pollers the server saw on the workflow task queue lately (it forgets them after about 5 minutes). */
  pollers: number;
  /** The latest of their polls. */
  lastPollMs?: number;
  workflowTask?: { attempt: number; started: boolean; scheduledAtMs?: number };
  activities: Array<{ name: string; attempt: number; lastHeartbeatMs?: number }>;
}

export async function stuckFacts(client: Client, workflowId: string): Promise<StuckFacts> {
  const d = await client.workflowService.describeWorkflowExecution({
    namespace: client.options.namespace,
    execution: { workflowId },
  });
  const taskQueue = d.executionConfig?.taskQueue?.name || d.workflowExecutionInfo?.taskQueue || '';
  const queue = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  const wft = d.pendingWorkflowTask;
  return {
    taskQueue,
    pollers: queue.pollers?.length ?? 0,
    lastPollMs: Math.max(0, ...(queue.pollers ?? []).map((p) => optionalTsToMs(p.lastAccessTime) ?? 0)) || undefined,
    workflowTask: wft
      ? {
          attempt: wft.attempt ?? 1,
          // The SDK's service client hands enums over as names.
          started:
            wft.state === PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED ||
            String(wft.state) === 'PENDING_WORKFLOW_TASK_STATE_STARTED',
          scheduledAtMs: optionalTsToMs(wft.originalScheduledTime) ?? optionalTsToMs(wft.scheduledTime),
        }
      : undefined,
    activities: (d.pendingActivities ?? []).map((a) => ({
      name: a.activityType?.name ?? 'an activity',
      attempt: a.attempt ?? 1,
      lastHeartbeatMs: optionalTsToMs(a.lastHeartbeatTime),
    })),
  };
}

/** The likeliest reason, most decisive evidence first. */
export function diagnose(f: StuckFacts, now = Date.now()): string {
  const queue = `task queue "${f.taskQueue}"`;
  if (f.pollers === 0) return `no worker polls ${queue}, so nothing can process the cancel`;
  if (f.lastPollMs !== undefined && now - f.lastPollMs > SILENT_POLLERS_MS) {
    return `no worker has polled ${queue} for ${seconds(now - f.lastPollMs)}, so nothing can process the cancel`;
  }
  const wft = f.workflowTask;
  const waiting = wft && !wft.started && wft.scheduledAtMs !== undefined ? now - wft.scheduledAtMs : 0;
  if (wft && waiting >= UNSTARTED_MS) {
    const earlier = wft.attempt > 1 ? `, attempt ${wft.attempt}` : '';
    return `no worker has taken its workflow task for ${seconds(waiting)}${earlier}: no worker polls ${queue}, or its workers hang`;
  }
  if (wft && wft.attempt > 1) {
    return `its workflow task keeps failing or timing out (attempt ${wft.attempt}): the workflow cannot process the cancel`;
  }
  const activity = f.activities[0];
  if (activity) {
    const beat =
      activity.lastHeartbeatMs === undefined
        ? 'no heartbeat'
        : `last heartbeat ${seconds(now - activity.lastHeartbeatMs)} ago`;
    return `it waits for ${activity.name} (attempt ${activity.attempt}, ${beat}) to stop: its worker may hang`;
  }
  return 'the workflow has not finished handling the cancel yet';
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
