// How a tool call's activity runs: timeouts, heartbeats, retries, cancellation.
//
// A hung worker (SIGSTOP, a frozen VM) keeps its open long polls, and the server goes on handing
// it tasks it never runs: one retry per activity poll it held (the agent's worker holds one,
// worker/create-worker.ts; the SDK's default is 10, and other workers may poll this queue).
// So every tool heartbeats against a short heartbeat timeout, which notices such an attempt in
// 2 s instead of at its start-to-close timeout, and a call gets enough attempts to get past every
// poll a hung worker can hold, inside a schedule-to-close bound.
import { ActivityCancellationType } from '@temporalio/workflow';
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';
import type { ToolSpec } from '../../common/tools/tool-catalog';

/** A dead attempt is noticed after this long without a heartbeat (a tool beats every 250 ms). */
export const TOOL_HEARTBEAT_TIMEOUT_S = 2;
/** Activity polls one worker may hold open (the SDK's default maximum, not the agent worker's 1): the retries a hung worker can swallow. */
export const HUNG_WORKER_POLLS = 10;
/** Longest wait before a retry, so that a run of dead attempts costs little more than their heartbeat timeouts. */
const MAX_RETRY_INTERVAL_S = 1;

/**
 * The activity options of a call to `spec`. An effect gets spec.maxAttempts attempts and no
 * schedule-to-close bound; a read-only tool gets the hung-worker allowance below.
 */
export function toolActivityOptions(spec: ToolSpec): ActivityOptions {
  const seconds = (n: number) => `${n} seconds` as const;
  const cancel: ActivityOptions = spec.effectful
    ? // An effect: a cancel waits until the activity has really stopped (then it is reconciled by key).
      { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED }
    : // Read-only and short: a cancel need not wait for the tool to acknowledge.
      { cancellationType: ActivityCancellationType.TRY_CANCEL };
  // An effect keeps the options it had: it already heartbeats, and its timing against a cancel or
  // a deadline (reconcile by key before the run ends) is what the exactly-once tests pin down.
  if (spec.effectful) {
    return {
      startToCloseTimeout: seconds(spec.timeoutSeconds),
      heartbeatTimeout: seconds(TOOL_HEARTBEAT_TIMEOUT_S),
      ...cancel,
      retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumAttempts: spec.maxAttempts },
    };
  }
  // The tool's own attempts and time, plus what the retries a hung worker swallows cost: each one
  // a heartbeat timeout and a retry interval. Every attempt is safe to repeat: read-only, or by key.
  const deadAttemptS = TOOL_HEARTBEAT_TIMEOUT_S + MAX_RETRY_INTERVAL_S;
  return {
    startToCloseTimeout: seconds(spec.timeoutSeconds),
    heartbeatTimeout: seconds(TOOL_HEARTBEAT_TIMEOUT_S),
    scheduleToCloseTimeout: seconds(spec.timeoutSeconds * spec.maxAttempts + HUNG_WORKER_POLLS * deadAttemptS),
    ...cancel,
    retry: {
      initialInterval: '200 milliseconds',
      backoffCoefficient: 2,
      maximumInterval: seconds(MAX_RETRY_INTERVAL_S),
      maximumAttempts: spec.maxAttempts + HUNG_WORKER_POLLS,
    },
  };
}

/** A local tool call's attempt is cut off after this long at most: a slow read holds up its workflow task no longer. */
export const LOCAL_TOOL_TIMEOUT_S = 5;
/** A local retry whose backoff would be longer waits on a server timer instead of in the workflow task. */
export const LOCAL_RETRY_THRESHOLD_MS = 500;

/** Whether calls to `spec` run as local activities (a read-only tool that did not opt out). */
export function runsAsLocalActivity(spec: ToolSpec): boolean {
  return spec.effectful !== true && spec.localActivity !== false;
}

/**
 * The local activity options of a read-only call: the tool's attempts, each cut at
 * LOCAL_TOOL_TIMEOUT_S, retried inside the workflow task while the backoff is short, and cancelled
 * with the step's scope (a local activity needs no heartbeat to hear of it). No hung-worker
 * allowance: a local activity runs on the worker that holds the workflow task, and a hung worker
 * loses the whole task (it times out and another worker runs the attempt again, under the same key).
 */
export function localToolActivityOptions(spec: ToolSpec): LocalActivityOptions {
  const attemptS = Math.min(spec.timeoutSeconds, LOCAL_TOOL_TIMEOUT_S);
  return {
    startToCloseTimeout: `${attemptS} seconds`,
    scheduleToCloseTimeout: `${spec.maxAttempts * (attemptS + MAX_RETRY_INTERVAL_S)} seconds`,
    localRetryThreshold: `${LOCAL_RETRY_THRESHOLD_MS} milliseconds`,
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    retry: {
      initialInterval: '200 milliseconds',
      backoffCoefficient: 2,
      maximumInterval: `${MAX_RETRY_INTERVAL_S} seconds`,
      maximumAttempts: spec.maxAttempts,
    },
  };
}
