// The decide activity's side of the fleet-wide LLM rate limit (docs/rate-limits.md): before the
// provider is called, a lease for the call's reserved tokens is asked of the model's limiter
// workflow (workflows/llm-limiter.ts) through update-with-start, so the first worker to need it
// starts it and every other one joins it. After the call the lease is released with what the call
// really used; a 429 with Retry-After pauses the limiter for everyone and the call waits its turn
// again, inside the same activity attempt (Temporal's retries stay for real failures).
import { createHash, randomUUID } from 'node:crypto';
import os from 'node:os';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import type { AcquireRequest, AcquireResult, LeaseAnswer, LimiterInput } from '../common/llm-limiter';
import {
  LIMITER_WORKFLOW_TYPE,
  WAITING_UPDATES,
  acquireUpdate,
  leaseQuery,
  limiterWorkflowId,
  pauseSignal,
  releaseSignal,
  withdrawSignal,
} from '../common/llm-limiter';
import type { RateLimits } from '../common/rate-limit';
import { agentDataConverter } from '../runtime/data-converter';
import { readEnv } from '../runtime/env-vars';
import type { TemporalEnv } from '../runtime/temporal-env';
import { connectionOptions } from '../runtime/temporal-env';
import type { LlmConfig } from './llm-config';

/**
 * Tokens reserved for the completion on top of the prompt estimate. A JSON action is well under
 * this; the real usage is returned to the limiter after the call.
 */
export const COMPLETION_RESERVE_TOKENS = 1000;
/** 429s answered inside one attempt (each waits for the limiter again) before the attempt fails. */
const MAX_RATE_LIMITED_CALLS = 6;
/**
 * Lease requests one worker process has at the limiter at once; its other decisions wait in line
 * here, in arrival order. One workflow serves every worker: this keeps its Updates few.
 */
export const OUTSTANDING_PER_WORKER = 4;
/** Pause used when a 429 carries no Retry-After. */
const DEFAULT_PAUSE_MS = 1000;

/** The worker's Prometheus metrics of the limiter (worker/metrics.ts); all optional. */
export interface LeaseObserver {
  /** +1 when a decision starts waiting for a lease, -1 when it stops. */
  waiting(delta: 1 | -1): void;
  granted(waitMs: number, tokens: number): void;
  paused(): void;
}

export interface LimiterSettings {
  scope: string;
  limits: RateLimits;
  /** The task queue the limiter workflow is started on (the worker's own). */
  taskQueue: string;
}

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
}

export class LlmLimiter {
  // The same spelling as the worker identity Temporal shows (`<pid>@<host>`).
  private readonly holder = `${process.pid}@${os.hostname()}`;
  private readonly line = new LocalLine(OUTSTANDING_PER_WORKER);

  constructor(
    private readonly client: Client,
    readonly settings: LimiterSettings,
    private readonly observer?: LeaseObserver,
  ) {}

  get workflowId(): string {
    return limiterWorkflowId(this.settings.scope);
  }

  /** Runs `call` under a lease; releases it with the real usage whatever happens. */
  async run<T>(leased: LeasedCall<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const leaseId = await this.acquire(leased.tokens, leased.signal);
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
   * (no history) until the request is near the head.
   */
  async acquire(tokens: number, signal: AbortSignal): Promise<string> {
    const request: AcquireRequest = { id: randomUUID(), holder: this.holder, tokens, limits: this.settings.limits };
    const started = Date.now();
    this.observer?.waiting(1);
    let inLine = false;
    try {
      await this.line.enter(signal);
      inLine = true;
      for (let failures = 0; ;) {
        signal.throwIfAborted();
        let answer: LeaseAnswer;
        try {
          answer = await this.client.withAbortSignal(signal, () => this.ask(request));
          failures = 0;
        } catch (err) {
          if (signal.aborted) throw err;
          // The limiter was between runs (continue-as-new), or the server was busy: ask again.
          if (++failures > 20) throw err;
          await sleep(Math.min(2000, 100 * 2 ** Math.min(failures, 5)), signal);
          continue;
        }
        if (answer.granted) {
          this.observer?.granted(Date.now() - started, tokens);
          return answer.lease_id;
        }
        // Far back in the queue: look again later, without writing history.
        let position = 'position' in answer ? answer.position : 0;
        while (position >= WAITING_UPDATES) {
          await sleep(pollIntervalMs(position), signal);
          signal.throwIfAborted();
          const seen = await this.client
            .withAbortSignal(signal, () =>
              this.client.workflow.getHandle(this.workflowId).query(leaseQuery, request.id),
            )
            .catch(() => undefined);
          if (seen === undefined || !('position' in seen)) break; // granted, or unknown: ask the Update
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

  /** The `acquire` Update, starting the limiter if needed (update-with-start, USE_EXISTING). */
  private ask(request: AcquireRequest): Promise<AcquireResult> {
    return this.client.workflow.executeUpdateWithStart(acquireUpdate, {
      args: [request],
      startWorkflowOperation: new WithStartWorkflowOperation(LIMITER_WORKFLOW_TYPE, {
        workflowId: this.workflowId,
        taskQueue: this.settings.taskQueue,
        args: [{ scope: this.settings.scope, limits: this.settings.limits } satisfies LimiterInput],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
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

/** Further back in the queue, look less often: 0.25 s near the head, at most every 3 s. */
export function pollIntervalMs(position: number): number {
  return Math.min(3000, Math.max(250, 50 * position));
}

/**
 * Tokens to reserve for a prompt of these characters (about 4 characters a token, rounded up) and its
 * completion: the run's completion cap when it sends one (a dollar budget caps each decision), else
 * COMPLETION_RESERVE_TOKENS.
 */
export function reservedTokens(promptChars: number, completionCap?: number): number {
  return Math.ceil(promptChars / 4) + (completionCap ?? COMPLETION_RESERVE_TOKENS);
}

/** The limiter the worker's environment asks for; undefined when no limit is set (the default). */
export function limiterSettingsFromEnv(
  llm: LlmConfig,
  taskQueue: string,
  env: NodeJS.ProcessEnv = process.env,
): LimiterSettings | undefined {
  const limits: RateLimits = {
    tokens_per_minute: readEnv('AGENT_LLM_TPM', env),
    requests_per_minute: readEnv('AGENT_LLM_RPM', env),
    max_in_flight: readEnv('AGENT_LLM_MAX_IN_FLIGHT', env),
    lease_ttl_ms: (readEnv('AGENT_LLM_LEASE_TTL_SECONDS', env) ?? llm.timeoutMs / 1000 + 30) * 1000,
  };
  if (limits.tokens_per_minute + limits.requests_per_minute + limits.max_in_flight === 0) return undefined;
  const scope =
    readEnv('AGENT_LLM_LIMIT_SCOPE', env) === 'api-key'
      ? // Never the key itself: a hash names it (workflow ids are visible to every operator).
        `key-${createHash('sha256').update(llm.apiKey).digest('hex').slice(0, 12)}`
      : llm.model;
  return { scope, limits, taskQueue };
}

/** For the worker's ready line: `gpt-4.1-mini (30000 TPM, 500 RPM, lease TTL 90 s)`. */
export function describeLimits(settings: LimiterSettings): string {
  const l = settings.limits;
  const parts = [
    l.tokens_per_minute ? `${l.tokens_per_minute} TPM` : '',
    l.requests_per_minute ? `${l.requests_per_minute} RPM` : '',
    l.max_in_flight ? `${l.max_in_flight} in flight` : '',
    `lease TTL ${l.lease_ttl_ms / 1000} s`,
  ];
  return `${settings.scope} (${parts.filter(Boolean).join(', ')})`;
}

/** A client of its own for the activities (the worker's NativeConnection cannot serve a Client). */
export async function connectLimiter(
  temporal: TemporalEnv,
  settings: LimiterSettings,
  observer?: LeaseObserver,
): Promise<{ limiter: LlmLimiter; close: () => Promise<void> }> {
  const connection = await Connection.connect(connectionOptions(temporal));
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
