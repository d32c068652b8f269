// One long-lived workflow per model (or API key) that grants LLM leases to every decide activity of
// every worker: tokens and requests per minute shared by the whole fleet, with nothing but Temporal.
// Decide activities ask through the `acquire` Update (update-with-start, USE_EXISTING), which
// returns when their turn comes; they `release` what they did not use and `pause` everyone on a
// 429. The grant rules are pure (common/rate-limit.ts). The state survives worker restarts (it is
// the workflow's) and a long history (continue-as-new carries it, the queue's order included).
import { allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import type { AcquireRequest, AcquireResult, LeaseAnswer, LimiterInput } from '../common/llm-limiter';
import {
  acquireUpdate,
  leaseQuery,
  limiterQuery,
  pauseSignal,
  releaseSignal,
  UPDATE_WAIT_MS,
  WAITING_UPDATES,
  withdrawSignal,
} from '../common/llm-limiter';
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

  // Where a request stands: its lease, else its place in the queue.
  const answer = (id: string): LeaseAnswer => {
    const lease = leaseOf(state, id);
    if (lease) return { granted: true, lease_id: lease.id, waited_ms: lease.waited_ms, expires_at: lease.expires_at };
    const position = state.queue.findIndex((w) => w.id === id);
    return position >= 0 ? { granted: false, position } : { granted: false, unknown: true };
  };
  let waitingInUpdate = 0;

  setHandler(
    acquireUpdate,
    async (req: AcquireRequest): Promise<AcquireResult> => {
      state.limits = req.limits;
      enqueue(state, req, Date.now());
      grantReady(state, Date.now());
      version++;
      let now = answer(req.id);
      // Near the head: wait here for the grant (a bounded number of acquirers, for a bounded time).
      if (!now.granted && 'position' in now && now.position < WAITING_UPDATES && waitingInUpdate < WAITING_UPDATES) {
        waitingInUpdate++;
        try {
          await condition(() => closing || leaseOf(state, req.id) !== undefined, UPDATE_WAIT_MS);
        } finally {
          waitingInUpdate--;
        }
        now = answer(req.id);
      }
      if (now.granted) return now;
      // Withdrawn meanwhile (or unknown): position 0 makes the acquirer ask again at once.
      return { granted: false, position: 'position' in now ? now.position : 0 };
    },
    {
      // A malformed request is rejected before it enters the history.
      validator: (req: AcquireRequest) => {
        const problem = invalidRequest(req) ?? invalidLimits(req.limits);
        if (problem) throw new Error(problem);
      },
      description:
        'Ask for a lease of {id, holder, tokens, limits}: granted, else the place in the FIFO queue (the head waits here).',
    },
  );
  setHandler(leaseQuery, (id: string) => answer(id), {
    description: 'Where the lease request with this id stands: granted, its place in the queue, or unknown.',
  });
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
  // Acquirers waiting in the Update are answered (their place in the queue is carried over); then
  // the state moves to a fresh run.
  grantReady(state, Date.now());
  closing = true;
  await condition(allHandlersFinished);
  await continueAsNew<typeof llmLimiter>({ ...input, state });
}
