// How a decision's activity runs: timeouts, heartbeats, retries, cancellation.
//
// A hung worker (SIGSTOP, a frozen VM) keeps its open activity polls, and a retry handed to one
// dies unrun, noticed at the 2 s heartbeat timeout: one Temporal attempt that sent no request. So a
// decision gets llm_max_attempts model requests (the activity counts the attempts that sent one,
// common/cost/llm-requests.ts) and HUNG_WORKER_POLLS more Temporal attempts, inside a schedule-to-close bound.
import { ActivityCancellationType } from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/workflow';
import { HUNG_WORKER_POLLS } from './tool-options';
import { LLM_REJECTED } from '../../common/agent-messages';

/** The backstop of one attempt; the real cap is the HTTP client's timeout (OPENAI_TIMEOUT_SECONDS, worker side). */
const START_TO_CLOSE_S = 300;
/** A dead attempt is noticed after this long without a heartbeat (decide beats every 250 ms). */
const HEARTBEAT_TIMEOUT_S = 2;
const MAX_RETRY_INTERVAL_S = 20;

/** Temporal's attempts for a decision of `maxRequests` model requests. */
export function decideMaxAttempts(maxRequests: number): number {
  return maxRequests + HUNG_WORKER_POLLS;
}

/** The decide activity's options. */
export function decideActivityOptions(maxRequests: number): ActivityOptions {
  const seconds = (n: number) => `${n} seconds` as const;
  return {
    startToCloseTimeout: seconds(START_TO_CLOSE_S),
    heartbeatTimeout: seconds(HEARTBEAT_TIMEOUT_S),
    // Every request's own time and backoff, plus each dead attempt's heartbeat timeout and backoff.
    scheduleToCloseTimeout: seconds(
      maxRequests * (START_TO_CLOSE_S + MAX_RETRY_INTERVAL_S) +
        HUNG_WORKER_POLLS * (HEARTBEAT_TIMEOUT_S + MAX_RETRY_INTERVAL_S),
    ),
    // Wait for the activity to confirm, so a cancelled run has really aborted its LLM request.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: seconds(MAX_RETRY_INTERVAL_S),
      maximumAttempts: decideMaxAttempts(maxRequests),
      nonRetryableErrorTypes: [LLM_REJECTED],
    },
  };
}
