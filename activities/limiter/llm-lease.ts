// The decide activity's side of the fleet-wide LLM rate limit (docs/rate-limits.md): before the
// provider is called, a lease for the call's reserved tokens is asked of the model's limiter
// workflow (workflows/limiter/llm-limiter.ts) through update-with-start, so the first worker to need it
// starts it and every other one joins it. After the call the lease is released with what the call
// really used; a 429 with Retry-After pauses the limiter for everyone and the call waits its turn
// again, inside the same activity attempt (Temporal's retries stay for real failures).
// A wait never outlives the limiter: if the limiter that queued the request ends (terminated, reset,
// failed) the decision fails at once with LlmLimiterUnavailable, and if it does not answer for 30 s
// the attempt fails with it too; the run then ends `llm_error` (docs/rate-limits.md).
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import {
  ApplicationFailure,
  Client,
  Connection,
  QueryRejectedError,
  WithStartWorkflowOperation,
  WorkflowClient,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import type { AcquireRequest, AcquireResult, LeaseAnswer, LimiterInput } from '../../common/limiter/llm-limiter';
import {
  LIMITER_FULL,
  LIMITER_TOO_LARGE,
  LIMITER_UNAVAILABLE,
  LIMITER_WORKFLOW_TASK_TIMEOUT,
  LIMITER_WORKFLOW_TYPE,
  UPDATE_WAIT_MS,
  WAITING_UPDATES,
  acquireUpdate,
  leaseQuery,
  limiterWorkflowId,
  pauseSignal,
  releaseSignal,
  withdrawSignal,
} from '../../common/limiter/llm-limiter';
import { oversized } from '../../common/limiter/rate-limit';
import { agentDataConverter } from '../../runtime/data-converter';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { clientGrpcInterceptors } from '../../runtime/closing-run-retry';
import { connectionOptions } from '../../runtime/temporal-env';
import type { LeaseObserver, LimiterSettings } from './limiter-settings';

/** 429s answered inside one attempt (each waits for the limiter again) before the attempt fails. */
const MAX_RATE_LIMITED_CALLS = 6;
/**
 * Lease requests one worker process has at the limiter at once; its other decisions wait in line
 * here, in arrival order. One workflow serves every worker: this keeps its Updates few.
 */
export const OUTSTANDING_PER_WORKER = 4;
/** Pause used when a 429 carries no Retry-After. */
const DEFAULT_PAUSE_MS = 1000;
/**
 * A limiter that has answered nothing (no Update, no query) for this long is not serving: the
 * attempt fails instead of waiting on it. A healthy one answers every Update within UPDATE_WAIT_MS.
 */
export const LIMITER_SILENCE_MS = 30_000;
/** The server's failure of an accepted Update whose workflow closed (terminated, failed) before answering it. */
const UPDATE_CLOSED_WORKFLOW = 'AcceptedUpdateCompletedWorkflow';
/** The server's failure of an Update a workflow task completed without seeing (it met continue-as-new): ask again. */
const UPDATE_UNPROCESSED = 'UnprocessedUpdate';
/** One Update call gets this long; the limiter itself answers within UPDATE_WAIT_MS. */
const ASK_TIMEOUT_MS = UPDATE_WAIT_MS + 10_000;
/** Why a queued decision fails when the limiter that queued it is gone. */
const LIMITER_ENDED =
  'it ended (terminated, reset or failed) while this decision waited in its queue; the next decision starts a fresh one';

/** A rate-limited provider answer: how long to pause everyone (ms), else undefined. */
export type RateLimitedAfter = (err: unknown) => number | undefined;

export interface LeasedCall<T> {
  /** Tokens to reserve for this call. */
  tokens: number;
  signal: AbortSignal;
  call: () => Promise<T>;
  /** Tokens the answer says it used; undefined: it does not say, the reservation stands. */
  usedTokens: (value: T) => number | undefined;
  rateLimited: RateLimitedAfter;
  /** The details a failure of the limiter itself carries (the decision's cost ledger). */
  failureDetails?: () => unknown[];
}

export class LlmLimiter {
  // The same spelling as the worker identity Temporal shows (`<pid>@<host>`).
  private readonly holder = `${process.pid}@${os.hostname()}`;
  private readonly line = new LocalLine(OUTSTANDING_PER_WORKER);
  /** Queries that a closed limiter refuses, instead of answering from its last state forever. */
  private readonly queries: WorkflowClient;

  constructor(
    private readonly client: Client,
    readonly settings: LimiterSettings,
    private readonly observer?: LeaseObserver,
  ) {
    this.queries = new WorkflowClient({
      connection: client.connection,
      namespace: client.options.namespace,
      dataConverter: client.options.dataConverter,
      queryRejectCondition: 'NOT_OPEN',
    });
  }

  get workflowId(): string {
    return limiterWorkflowId(this.settings.scope);
  }

  /** Runs `call` under a lease; releases it with the real usage whatever happens. */
  async run<T>(leased: LeasedCall<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const leaseId = await this.acquire(leased.tokens, leased.signal, leased.failureDetails);
      let used = leased.tokens; // a call that failed without an answer may still have been charged
      try {
        const value = await leased.call();
        used = leased.usedTokens(value) ?? leased.tokens;
        return value;
      } catch (err) {
        const pauseMs = leased.rateLimited(err);
        if (pauseMs === undefined || leased.signal.aborted) throw err;
        used = 0; // refused: the provider did not spend tokens on it
        this.observer?.paused();
        await this.signal(pauseSignal, { retry_after_ms: pauseMs || DEFAULT_PAUSE_MS });
        if (attempt >= MAX_RATE_LIMITED_CALLS) throw err;
      } finally {
        await this.signal(releaseSignal, { lease_id: leaseId, used_tokens: used });
      }
    }
  }

  /**
   * Waits for a lease; returns its id. Starts the limiter if it is not running. Near the head of
   * the queue the wait is inside the `acquire` Update; further back, the `lease` query is polled
   * (no history) until the request is near the head. Fails with an ApplicationFailure of type
   * LlmLimiterUnavailable when the limiter that queued the request is gone or does not answer,
   * LlmLimiterFull when its queue is full, LlmRequestTooLarge (at once) when `tokens` exceed the
   * tokens per minute.
   */
  async acquire(tokens: number, signal: AbortSignal, failureDetails?: () => unknown[]): Promise<string> {
    const request: AcquireRequest = { id: randomUUID(), holder: this.holder, tokens, limits: this.settings.limits };
    const started = Date.now();
    const silenceMs = this.settings.silenceMs ?? LIMITER_SILENCE_MS;
    const fail = (type: string, message: string, nonRetryable: boolean) =>
      this.failure(type, message, nonRetryable, failureDetails);
    const ended = () => fail(LIMITER_UNAVAILABLE, LIMITER_ENDED, true);
    // The limiter refuses such a request; say why here, before asking (it would never be granted).
    const huge = oversized(this.settings.limits, tokens);
    if (huge) throw fail(LIMITER_TOO_LARGE, `this decision's ${huge}`, true);
    this.observer?.waiting(1);
    let inLine = false;
    let queued = false;
    try {
      await this.line.enter(signal);
      inLine = true;
      // The limiter's silence counts from here: the wait in this worker's own line is not its fault.
      let heardAt = Date.now();
      // One call may take what is left of the silence allowed (a healthy limiter answers in UPDATE_WAIT_MS).
      const callTimeout = () => Math.max(1000, Math.min(ASK_TIMEOUT_MS, heardAt + silenceMs - Date.now()));
      for (let failures = 0; ;) {
        signal.throwIfAborted();
        let answer: AcquireResult;
        try {
          answer = await this.ask(request, queued, withTimeout(signal, callTimeout()));
          heardAt = Date.now();
          failures = 0;
        } catch (err) {
          if (signal.aborted) throw err;
          const refusal = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
          // The limiter closed under the Update (it had accepted it: the request was queued), or an
          // Update found no limiter: ended, unless it was only continuing as new.
          const closed = refusal instanceof ApplicationFailure && refusal.type === UPDATE_CLOSED_WORKFLOW;
          if (closed) queued = true;
          if (closed || (queued && err instanceof WorkflowNotFoundError)) {
            if (!(await this.running())) throw ended();
          } else if (refusal instanceof ApplicationFailure && refusal.type === LIMITER_FULL)
            throw fail(LIMITER_FULL, refusal.message, false);
          else if (refusal && !(refusal instanceof ApplicationFailure && refusal.type === UPDATE_UNPROCESSED))
            throw fail(LIMITER_UNAVAILABLE, `it refused the request: ${refusal.message.slice(0, 300)}`, true);
          if (Date.now() - heardAt >= silenceMs)
            throw fail(LIMITER_UNAVAILABLE, `it has not answered for ${Math.round(silenceMs / 1000)} s`, false);
          // Between two runs (continue-as-new), or the server was busy: ask again.
          await sleep(Math.min(2000, 100 * 2 ** Math.min(++failures, 5)), signal);
          continue;
        }
        if ('lost' in answer) throw ended();
        if (answer.granted) {
          this.observer?.granted(Date.now() - started, tokens);
          return answer.lease_id;
        }
        queued = true;
        // Far back in the queue: look again later, without writing history.
        let position = answer.position;
        while (position >= WAITING_UPDATES) {
          await sleep(pollIntervalMs(position), signal);
          signal.throwIfAborted();
          let seen: LeaseAnswer;
          try {
            seen = await this.lookUp(request.id, withTimeout(signal, callTimeout()));
            heardAt = Date.now();
          } catch (err) {
            if (signal.aborted) throw err;
            if (err instanceof QueryRejectedError || err instanceof WorkflowNotFoundError) throw ended();
            if (Date.now() - heardAt >= silenceMs)
              throw fail(LIMITER_UNAVAILABLE, `it has not answered for ${Math.round(silenceMs / 1000)} s`, false);
            continue;
          }
          if (!('position' in seen)) break; // granted, or unknown here: the Update tells which
          position = seen.position;
        }
      }
    } catch (err) {
      // Cancelled or failed while queued: give the place up so it is not granted to nobody.
      if (inLine) await this.signal(withdrawSignal, { id: request.id });
      throw err;
    } finally {
      if (inLine) this.line.leave();
      this.observer?.waiting(-1);
    }
  }

  /** How a decision that got no lease fails; `failureDetails`: the attempts it was charged for. */
  private failure(
    type: string,
    message: string,
    nonRetryable: boolean,
    failureDetails: (() => unknown[]) | undefined,
  ): ApplicationFailure {
    return ApplicationFailure.create({
      type,
      message: `LLM rate limiter ${this.workflowId}: ${message}`,
      nonRetryable,
      details: failureDetails?.() ?? [],
    });
  }

  /**
   * The `acquire` Update. The first time, update-with-start (USE_EXISTING) starts the limiter if
   * needed; once the request was queued, a plain Update marked `again`, so that a limiter which
   * replaced the one that queued it says so instead of queueing it at the back.
   */
  private ask(request: AcquireRequest, queued: boolean, signal: AbortSignal): Promise<AcquireResult> {
    return this.client.withAbortSignal(signal, () =>
      queued
        ? this.client.workflow
            .getHandle(this.workflowId)
            .executeUpdate(acquireUpdate, { args: [{ ...request, again: true }] })
        : this.client.workflow.executeUpdateWithStart(acquireUpdate, {
            args: [request],
            startWorkflowOperation: new WithStartWorkflowOperation(LIMITER_WORKFLOW_TYPE, {
              workflowId: this.workflowId,
              taskQueue: this.settings.taskQueue,
              args: [{ scope: this.settings.scope, limits: this.settings.limits } satisfies LimiterInput],
              workflowIdConflictPolicy: 'USE_EXISTING',
              workflowTaskTimeout: LIMITER_WORKFLOW_TASK_TIMEOUT,
            }),
          }),
    );
  }

  /**
   * Whether a limiter runs under this id now: after continue-as-new it does (the next Update reaches
   * the new run, which carried the queue); after a terminate or a failure it does not, or it is a
   * fresh one (which answers `lost`).
   */
  private async running(): Promise<boolean> {
    try {
      return (await this.client.workflow.getHandle(this.workflowId).describe()).status.name === 'RUNNING';
    } catch (err) {
      return !(err instanceof WorkflowNotFoundError);
    }
  }

  /** The `lease` query; a closed limiter refuses it (QueryRejectedError). */
  private lookUp(id: string, signal: AbortSignal): Promise<LeaseAnswer> {
    return this.queries.withAbortSignal(signal, () => this.queries.getHandle(this.workflowId).query(leaseQuery, id));
  }

  /** Fire and forget, but awaited: a lost release only costs capacity until the lease's TTL. */
  private async signal<A>(def: SignalDefinition<[A]>, arg: A): Promise<void> {
    try {
      await this.client.workflow.getHandle(this.workflowId).signal(def, arg);
    } catch {
      /* the TTL covers it */
    }
  }
}

/** The activity's signal, or this many ms, whichever ends first. */
function withTimeout(signal: AbortSignal, ms: number): AbortSignal {
  return AbortSignal.any([signal, AbortSignal.timeout(ms)]);
}

/** Further back in the queue, look less often: 0.25 s near the head, at most every 3 s. */
export function pollIntervalMs(position: number): number {
  return Math.min(3000, Math.max(250, 50 * position));
}

/** A client of its own for the activities (the worker's NativeConnection cannot serve a Client). */
export async function connectLimiter(
  temporal: TemporalEnv,
  settings: LimiterSettings,
  observer?: LeaseObserver,
): Promise<{ limiter: LlmLimiter; close: () => Promise<void> }> {
  // Closing-aware retries: an acquire that meets the limiter's continue-as-new reaches the next run
  // within tens of milliseconds, where the SDK's own retries would wait 1 s and more.
  const connection = await Connection.connect({
    ...connectionOptions(temporal),
    interceptors: clientGrpcInterceptors(),
  });
  const client = new Client({ connection, namespace: temporal.namespace, dataConverter: agentDataConverter() });
  return { limiter: new LlmLimiter(client, settings, observer), close: () => connection.close() };
}

/** A FIFO line with `slots` places at the front; enter() resolves when one is free. */
class LocalLine {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly slots: number) {}

  enter(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.active < this.slots) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal.removeEventListener('abort', abort);
        resolve(); // the slot passes from leave() to us: active is unchanged
      };
      const abort = () => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal.reason instanceof Error ? signal.reason : new Error('cancelled while waiting for a lease'));
      };
      this.waiting.push(go);
      signal.addEventListener('abort', abort, { once: true });
    });
  }

  leave(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
