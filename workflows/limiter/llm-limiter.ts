// One long-lived workflow per model (or API key) that grants LLM leases to every decide activity of
// every worker: tokens and requests per minute shared by the whole fleet, with nothing but Temporal.
// Decide activities ask through the `acquire` Update (update-with-start, USE_EXISTING), which
// returns when their turn comes; they `release` what they did not use and `pause` everyone on a
// 429. The grant rules are pure (common/limiter/rate-limit.ts). The state survives worker restarts (it is
// the workflow's) and a long history (continue-as-new carries it, the queue's order included); what
// it carries is bounded: the open leases, the queue (both capped) and a window of per-second counters.
// Every message is checked first: a bad Update is refused, a bad Signal dropped with a log line.
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  log,
  makeContinueAsNewFunc,
  setHandler,
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import type { AcquireRequest, AcquireResult, LeaseAnswer, LimiterInput } from '../../common/limiter/llm-limiter';
import {
  acquireUpdate,
  invalidAcquire,
  invalidInput,
  leaseQuery,
  LIMITER_FULL,
  LIMITER_WORKFLOW_TASK_TIMEOUT,
  limiterQuery,
  parsePause,
  parseRelease,
  parseWithdraw,
  pauseSignal,
  releaseSignal,
  UPDATE_WAIT_MS,
  WAITING_UPDATES,
  withdrawSignal,
} from '../../common/limiter/llm-limiter';
import { decodedArgument, undecodedSignal } from '../../common/temporal/undecoded-signal';
import {
  adoptedLimits,
  BUCKET_MS,
  carriedState,
  enqueue,
  grantReady,
  leaseOf,
  newLimiterState,
  nextWakeAt,
  pause,
  oversized,
  queueFull,
  release,
  snapshot,
  withdraw,
} from '../../common/limiter/rate-limit';
import type { LimiterState } from '../../common/limiter/rate-limit';

const DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS = 2000;

/** One limiter run: its input and state, and what its handlers and loop share. */
interface LimiterRun {
  input: LimiterInput;
  state: LimiterState;
  /** Bumped by every message: the loop re-evaluates grants when it changes. */
  version: number;
  /** Set once the run hands over to the next: acquirers waiting in the Update are answered. */
  closing: boolean;
}

export async function llmLimiter(input: LimiterInput): Promise<void> {
  const problem = invalidInput(input);
  if (problem) throw ApplicationFailure.nonRetryable(`llmLimiter input: ${problem}`, 'InvalidLimiterInput');
  const state = input.state ? carriedState(input.state, BUCKET_MS) : newLimiterState(input.limits, BUCKET_MS);
  const run: LimiterRun = { input, state, version: 0, closing: false };
  handleAcquire(run);
  handleMessages(run);

  const maxEvents = input.continue_as_new_after_events ?? DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS;
  while (!workflowInfo().continueAsNewSuggested && workflowInfo().historyLength < maxEvents) {
    const now = Date.now();
    grantReady(state, now);
    const seen = run.version;
    const wake = nextWakeAt(state, now);
    // Sleep until a message arrives or the next moment a grant could become possible.
    if (wake === undefined) await condition(() => run.version !== seen);
    else await condition(() => run.version !== seen, Math.max(1, wake - now), { summary: 'next possible grant' });
  }
  // Acquirers waiting in the Update are answered (their place in the queue is carried over); then
  // the state moves to a fresh run, with the same short workflow task timeout.
  grantReady(state, Date.now());
  run.closing = true;
  await condition(allHandlersFinished);
  const next: LimiterInput = { ...input, state };
  await makeContinueAsNewFunc<typeof llmLimiter>({ workflowTaskTimeout: LIMITER_WORKFLOW_TASK_TIMEOUT })(next);
}

/** Where a request stands: its lease, else its place in the queue. */
function answerOf(state: LimiterState, id: string): LeaseAnswer {
  const lease = leaseOf(state, id);
  if (lease) return { granted: true, lease_id: lease.id, waited_ms: lease.waited_ms, expires_at: lease.expires_at };
  const position = state.queue.findIndex((w) => w.id === id);
  return position >= 0 ? { granted: false, position } : { granted: false, unknown: true };
}

/** The acquire Update: a lease now, else a place in the FIFO queue (near its head, after a wait here). */
function handleAcquire(run: LimiterRun): void {
  const { input, state } = run;
  const answer = (id: string) => answerOf(state, id);
  let waitingInUpdate = 0;
  setHandler(
    acquireUpdate,
    async (req: AcquireRequest): Promise<AcquireResult> => {
      // Asked again, but never queued here: the limiter that queued it is gone (terminated, reset).
      if (req.again === true && 'unknown' in answer(req.id)) return { granted: false, lost: true };
      // A request may tighten the limits the limiter started with, never loosen them (nor its TTL).
      state.limits = adoptedLimits(input.limits, req.limits);
      if (!enqueue(state, req, Date.now()))
        throw ApplicationFailure.create({ type: LIMITER_FULL, message: queueFull(state, req.id) });
      grantReady(state, Date.now());
      run.version++;
      let now = answer(req.id);
      // Near the head: wait here for the grant (a bounded number of acquirers, for a bounded time).
      if (!now.granted && 'position' in now && now.position < WAITING_UPDATES && waitingInUpdate < WAITING_UPDATES) {
        waitingInUpdate++;
        try {
          await condition(() => run.closing || leaseOf(state, req.id) !== undefined, UPDATE_WAIT_MS, {
            summary: 'acquire Update waits for its lease',
          });
        } finally {
          waitingInUpdate--;
        }
        now = answer(req.id);
      }
      if (now.granted) return now;
      if ('position' in now) return now;
      // Gone from the queue meanwhile: only a withdraw does that, and then nobody waits for it.
      return { granted: false, lost: true };
    },
    {
      // A malformed request, or one that finds the queue full, is refused before it enters the history.
      validator: (req: unknown) => {
        const problem = invalidAcquire(req);
        if (problem) throw new Error(problem);
        const r = req as AcquireRequest;
        // More tokens than a minute allows would block the FIFO, then hold the whole minute.
        const huge = oversized(adoptedLimits(input.limits, r.limits), r.tokens);
        if (huge) throw new Error(huge);
        const full = r.again === true ? undefined : queueFull(state, r.id);
        if (full) throw ApplicationFailure.create({ type: LIMITER_FULL, message: full });
      },
      description:
        'Ask for a lease of {id, holder, tokens, limits}: granted, else the place in the FIFO queue (the head waits here).',
    },
  );
}

/** The queries, and the release, pause and withdraw Signals. */
function handleMessages(run: LimiterRun): void {
  const { input, state } = run;
  setHandler(
    leaseQuery,
    (id: unknown) => (typeof id === 'string' ? answerOf(state, id) : { granted: false, unknown: true }),
    { description: 'Where the lease request with this id stands: granted, its place in the queue, or unknown.' },
  );
  // Signals: decoded here (a payload that cannot be read is dropped too), then checked. A message
  // that is not what its name promises: one line in the worker's log, nothing else.
  const onSignal = <M>(name: string, parse: (value: unknown) => M | string, apply: (m: M) => void) =>
    setHandler(undecodedSignal(name), (...args: unknown[]) => {
      const arg = decodedArgument(args[0]);
      const m = typeof arg === 'string' ? arg : parse(arg.value);
      if (typeof m === 'string') return log.warn(`llmLimiter: dropped a ${name} signal: ${m}`);
      apply(m);
      run.version++;
    });
  onSignal(releaseSignal.name, parseRelease, (m) => release(state, m.lease_id, m.used_tokens, Date.now()));
  onSignal(pauseSignal.name, parsePause, (m) => pause(state, Date.now() + m.retry_after_ms));
  onSignal(withdrawSignal.name, parseWithdraw, (m) => withdraw(state, m.id));
  setHandler(limiterQuery, () => ({ scope: input.scope, ...snapshot(state, Date.now()) }), {
    description: 'The limits, what this minute counts, leases in use, the queue, grants and wait times.',
  });
}

// A bug (an error thrown by this code, or a state it cannot read) fails the limiter where everyone
// sees it, instead of retrying its workflow task forever while every decision of the fleet waits:
// waiting decisions then fail with LlmLimiterUnavailable, later ones start a fresh limiter.
// On a versioned worker (worker/deployment.ts) the limiter follows the current version
// (AUTO_UPGRADE) instead of being pinned like agent runs: it never ends, so pinned it would keep its
// old version's workers busy for ever. Its next workflow task after a rollout replays on the new
// code; a new code that cannot replay its history fails it as above, and the next decision starts a
// fresh limiter. An unversioned worker must not send a versioning behavior (the server refuses it).
setWorkflowOptions(
  () => ({
    failureExceptionTypes: [Error],
    ...(workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'AUTO_UPGRADE' as const } : {}),
  }),
  llmLimiter,
);
