// The limiter workflow's contract (workflows/limiter/llm-limiter.ts): its id per model, its input, the
// `acquire` Update, the `release`/`pause`/`withdraw` Signals and the `limits` query, and the checks
// every message passes before the limiter acts on it (anyone with access to the namespace can send
// one: a bad payload is refused or dropped, never fails the limiter's workflow task). Shared by the
// decide activity (activities/limiter/llm-lease.ts), the CLI (`agent limits`) and the workflow.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { LeaseRequest, LimiterSnapshot, LimiterState, RateLimits } from './rate-limit';
import { invalidLimits, invalidRequest, validId } from './rate-limit';

export const LIMITER_WORKFLOW_TYPE = 'llmLimiter';
export const LIMITER_ID_PREFIX = 'llm-limiter:';
/**
 * The limiter's workflow task timeout, short like the runs' own (client/agent-client.ts
 * WORKFLOW_TASK_TIMEOUT, 2 s): a task lost with a dead worker is retried elsewhere after 4 s, not
 * Temporal's default 10 s, while every decision of the fleet waits on it.
 */
export const LIMITER_WORKFLOW_TASK_TIMEOUT = '4 seconds';

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
  /**
   * Set when this request was queued at the limiter before: a limiter that does not know it (it was
   * terminated, reset or replaced meanwhile) answers `lost` instead of queueing it again at the back.
   */
  again?: boolean;
}

export type AcquireResult =
  | { granted: true; lease_id: string; waited_ms: number; expires_at: number }
  /**
   * Not yet: the request keeps its place (`position`, 0 = next); ask the `lease` query (cheap, no
   * history) until it is near the head, then ask `acquire` again, which waits there.
   */
  | { granted: false; position: number }
  /** Asked `again`, but this limiter never queued it: the one that did is gone. */
  | { granted: false; lost: true };

/**
 * Only this many acquirers wait inside the Update at once (Temporal allows 10 Updates in flight per
 * workflow by default): the ones at the head of the queue. The others poll the `lease` query.
 */
export const WAITING_UPDATES = 6;
/** How long one acquirer waits inside the Update before it is told to ask again. */
export const UPDATE_WAIT_MS = 10_000;

export type LeaseAnswer = AcquireResult | { granted: false; unknown: true };

/** Error types (ApplicationFailure.type) the decide activity fails with when the limiter cannot serve it. */
export const LIMITER_UNAVAILABLE = 'LlmLimiterUnavailable';
export const LIMITER_FULL = 'LlmLimiterFull';
/** The decision asks for more tokens than a minute allows: it could never be granted (not retried). */
export const LIMITER_TOO_LARGE = 'LlmRequestTooLarge';

export interface ReleaseMessage {
  lease_id: string;
  /** Omitted or not a count: the lease's whole reservation counts (the call may have used it). */
  used_tokens: number;
}
export interface PauseMessage {
  retry_after_ms: number;
}
export interface WithdrawMessage {
  id: string;
}

export const acquireUpdate = defineUpdate<AcquireResult, [AcquireRequest]>('acquire');
export const releaseSignal = defineSignal<[ReleaseMessage]>('release');
export const pauseSignal = defineSignal<[PauseMessage]>('pause');
export const withdrawSignal = defineSignal<[WithdrawMessage]>('withdraw');
export const limiterQuery = defineQuery<LimiterSnapshot & { scope: string }>('limits');
export const leaseQuery = defineQuery<LeaseAnswer, [string]>('lease');

/** The longest pause one 429 may ask for. */
export const MAX_PAUSE_MS = 60_000;

/** A message's payload as an object, else undefined (null, an array, a string, nothing at all). */
function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A `release` payload, else the one-line reason it is dropped. */
export function parseRelease(value: unknown): ReleaseMessage | string {
  const m = record(value);
  if (!m) return 'the payload must be an object {lease_id, used_tokens}';
  if (!validId(m.lease_id)) return 'lease_id must be a lease id';
  const used = m.used_tokens;
  return { lease_id: m.lease_id, used_tokens: typeof used === 'number' && Number.isSafeInteger(used) ? used : -1 };
}

/** A `pause` payload (its wait capped at a minute), else the one-line reason it is dropped. */
export function parsePause(value: unknown): PauseMessage | string {
  const m = record(value);
  if (!m) return 'the payload must be an object {retry_after_ms}';
  const ms = m.retry_after_ms;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
    return 'retry_after_ms must be a non-negative number of milliseconds';
  return { retry_after_ms: Math.min(ms, MAX_PAUSE_MS) };
}

/** A `withdraw` payload, else the one-line reason it is dropped. */
export function parseWithdraw(value: unknown): WithdrawMessage | string {
  const m = record(value);
  if (!m) return 'the payload must be an object {id}';
  return validId(m.id) ? { id: m.id } : 'id must be a request id';
}

/** Why an `acquire` payload is refused (one line); undefined when it is a request. */
export function invalidAcquire(value: unknown): string | undefined {
  const problem = invalidRequest(value);
  if (problem) return problem;
  const m = value as Record<string, unknown>;
  if (m.again !== undefined && typeof m.again !== 'boolean') return 'again must be true or false';
  return invalidLimits(m.limits);
}

/** Why a limiter's input cannot start it (one line); undefined when it can. */
export function invalidInput(value: unknown): string | undefined {
  const m = record(value);
  if (!m) return 'the input must be an object {scope, limits}';
  if (typeof m.scope !== 'string' || m.scope === '' || m.scope.length > 200)
    return 'scope must be a model name of 1 to 200 characters';
  const every = m.continue_as_new_after_events;
  if (every !== undefined && (typeof every !== 'number' || !Number.isSafeInteger(every) || every < 10))
    return 'continue_as_new_after_events must be an integer of at least 10';
  if (m.state !== undefined && !record(m.state)) return 'state must be an object';
  return invalidLimits(m.limits);
}
