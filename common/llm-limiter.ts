// The limiter workflow's contract (workflows/llm-limiter.ts): its id per model, its input, the
// `acquire` Update, the `release`/`pause`/`withdraw` Signals and the `limits` query. Shared by the
// decide activity (activities/llm-lease.ts), the CLI (`agent limits`) and the workflow.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { LeaseRequest, LimiterSnapshot, LimiterState, RateLimits } from './rate-limit';

export const LIMITER_WORKFLOW_TYPE = 'llmLimiter';
export const LIMITER_ID_PREFIX = 'llm-limiter:';

/** One limiter per scope (a model name, or `key-<hash>` for an API key): its workflow id. */
export function limiterWorkflowId(scope: string): string {
  return `${LIMITER_ID_PREFIX}${scope}`;
}

export interface LimiterInput {
  scope: string;
  limits: RateLimits;
  /** Carried over by continue-as-new: the queue, the open leases, the window, the statistics. */
  state?: LimiterState;
  /** Continue as new after this many history events (default 2000; tests use fewer). */
  continue_as_new_after_events?: number;
}

export interface AcquireRequest extends LeaseRequest {
  /** The limits the asking worker is configured with: the limiter adopts the latest it is sent. */
  limits: RateLimits;
}

export type AcquireResult =
  | { granted: true; lease_id: string; waited_ms: number; expires_at: number }
  /**
   * Not yet: the request keeps its place (`position`, 0 = next); ask the `lease` query (cheap, no
   * history) until it is near the head, then ask `acquire` again, which waits there.
   */
  | { granted: false; position: number };

/**
 * Only this many acquirers wait inside the Update at once (Temporal allows 10 Updates in flight per
 * workflow by default): the ones at the head of the queue. The others poll the `lease` query.
 */
export const WAITING_UPDATES = 6;
/** How long one acquirer waits inside the Update before it is told to ask again. */
export const UPDATE_WAIT_MS = 10_000;

export type LeaseAnswer = AcquireResult | { granted: false; unknown: true };

export const acquireUpdate = defineUpdate<AcquireResult, [AcquireRequest]>('acquire');
export const releaseSignal = defineSignal<[{ lease_id: string; used_tokens: number }]>('release');
export const pauseSignal = defineSignal<[{ retry_after_ms: number }]>('pause');
export const withdrawSignal = defineSignal<[{ id: string }]>('withdraw');
export const limiterQuery = defineQuery<LimiterSnapshot & { scope: string }>('limits');
export const leaseQuery = defineQuery<LeaseAnswer, [string]>('lease');
