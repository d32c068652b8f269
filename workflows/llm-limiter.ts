// One long-lived workflow per model (or API key) that grants LLM leases to every decide activity of
// every worker: tokens and requests per minute shared by the whole fleet, with nothing but Temporal.
// Decide activities ask through the `acquire` Update (update-with-start, USE_EXISTING), which
// returns when their turn comes; they `release` what they did not use and `pause` everyone on a
// 429. The grant rules are pure (common/rate-limit.ts). The state survives worker restarts (it is
// the workflow's) and a long history (continue-as-new carries it, the queue's order included).
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { AcquireRequest, AcquireResult, LimiterInput } from '../common/llm-limiter';
import { acquireUpdate, limiterQuery, pauseSignal, releaseSignal, withdrawSignal } from '../common/llm-limiter';
import {
  enqueue,
  grantReady,
  invalidLimits,
  invalidRequest,
  leaseOf,
  newLimiterState,
  nextWakeAt,
  pause,
  release,
  snapshot,
  withdraw,
} from '../common/rate-limit';

const DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS = 2000;

export async function llmLimiter(input: LimiterInput): Promise<void> {
  const state = input.state ?? newLimiterState(input.limits);
  // Bumped by every message: the loop re-evaluates grants when it changes.
  let version = 0;
  let closing = false;

  setHandler(
    acquireUpdate,
    async (req: AcquireRequest): Promise<AcquireResult> => {
      state.limits = req.limits;
      enqueue(state, req, Date.now());
      version++;
      await condition(() => closing || leaseOf(state, req.id) !== undefined);
      const lease = leaseOf(state, req.id);
      if (!lease) return { granted: false, retry: true };
      return { granted: true, lease_id: lease.id, waited_ms: lease.waited_ms, expires_at: lease.expires_at };
    },
    {
      // A malformed request is rejected before it enters the history.
      validator: (req: AcquireRequest) => {
        const problem = invalidRequest(req) ?? invalidLimits(req.limits);
        if (problem) throw new Error(problem);
      },
      description: 'Wait for a lease of {id, holder, tokens, limits}; answered when the FIFO queue reaches it.',
    },
  );
  setHandler(releaseSignal, ({ lease_id, used_tokens }) => {
    release(state, lease_id, used_tokens, Date.now());
    version++;
  });
  setHandler(pauseSignal, ({ retry_after_ms }) => {
    const ms = Number.isFinite(retry_after_ms) ? Math.min(Math.max(retry_after_ms, 0), 60_000) : 0;
    pause(state, Date.now() + ms);
    version++;
  });
  setHandler(withdrawSignal, ({ id }) => {
    withdraw(state, id);
    version++;
  });
  setHandler(limiterQuery, () => ({ scope: input.scope, ...snapshot(state, Date.now()) }), {
    description: 'The limits, what this minute counts, leases in use, the queue, grants and wait times.',
  });

  const maxEvents = input.continue_as_new_after_events ?? DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS;
  while (!workflowInfo().continueAsNewSuggested && workflowInfo().historyLength < maxEvents) {
    const now = Date.now();
    grantReady(state, now);
    const seen = version;
    const wake = nextWakeAt(state, now);
    // Sleep until a message arrives or the next moment a grant could become possible.
    if (wake === undefined) await condition(() => version !== seen);
    else await condition(() => version !== seen, Math.max(1, wake - now));
  }
  // Waiting acquirers are told to ask again (their place in the queue is carried over); then the
  // state moves to a fresh run.
  grantReady(state, Date.now());
  closing = true;
  await condition(allHandlersFinished);
  await continueAsNew<typeof llmLimiter>({ ...input, state });
}
