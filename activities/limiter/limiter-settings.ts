// The fleet-wide LLM rate limit as the worker's environment sets it (docs/rate-limits.md), and the
// tokens a decision reserves: what a worker needs at start and every decision, without the Temporal
// client that only the lease itself (llm-lease.ts, loaded when a limit is set) uses.
import { createHash } from 'node:crypto';
import type { RateLimits } from '../../common/limiter/rate-limit';
import { invalidLimits } from '../../common/limiter/rate-limit';
import { readEnv } from '../../runtime/env-vars';
import type { LlmConfig } from '../decide/llm-config';

/**
 * Tokens reserved for the completion on top of the prompt estimate. A JSON action is well under
 * this; the real usage is returned to the limiter after the call.
 */
export const COMPLETION_RESERVE_TOKENS = 1000;

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
  /** LIMITER_SILENCE_MS unless told (tests). */
  silenceMs?: number;
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
  // The limiter refuses limits it cannot work with: say so when the worker starts, not at each decision.
  const problem = invalidLimits(limits);
  if (problem) throw new Error(`the LLM rate limit: ${problem}`);
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
