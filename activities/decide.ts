// The decision step (Think): one Chat Completions call through the `openai` client. It returns
// the raw text and token usage; the workflow validates the text. Temporal owns the retries, so
// the HTTP client never retries on its own, and every failure is classified for the retry policy.
import { Context, ApplicationFailure } from '@temporalio/activity';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { DecideInput, DecideOutput } from '../workflows/types';
import { LLM_REJECTED, LLM_RETRYABLE, LLM_TIMEOUT } from '../workflows/types';
import type { LlmConfig } from './llm-config';
import { SYSTEM_PROMPT } from './system-prompt';

const HEARTBEAT_EVERY_MS = 250;

export function createDecide(config: LlmConfig) {
  const client = new OpenAI({ apiKey: config.apiKey, baseURL: config.baseURL, maxRetries: 0, timeout: config.timeoutMs });

  return async function decide(input: DecideInput): Promise<DecideOutput> {
    const ctx = Context.current();
    // Heartbeats carry cancellation to us; the signal aborts the HTTP request at once.
    const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
    try {
      const completion = await client.chat.completions.create(
        {
          model: config.model,
          temperature: 0,
          response_format: { type: 'json_object' },
          messages: [
            { role: 'system', content: SYSTEM_PROMPT },
            { role: 'user', content: JSON.stringify(input.payload) },
          ],
        },
        { signal: ctx.cancellationSignal, headers: { 'Idempotency-Key': input.idempotency_key } },
      );
      const usage = completion.usage;
      return {
        text: completion.choices[0]?.message?.content ?? '',
        model: completion.model,
        usage: {
          prompt_tokens: usage?.prompt_tokens ?? 0,
          completion_tokens: usage?.completion_tokens ?? 0,
          total_tokens: usage?.total_tokens ?? 0,
        },
      };
    } catch (err) {
      throw classify(err, ctx);
    } finally {
      clearInterval(beat);
    }
  };
}

function classify(err: unknown, ctx: Context): unknown {
  // A cancelled activity: rethrow what the SDK expects so Temporal records a cancellation.
  if (err instanceof APIUserAbortError || ctx.cancellationSignal.aborted) {
    return ctx.cancellationSignal.reason ?? err;
  }
  if (err instanceof APIConnectionTimeoutError || err instanceof APIConnectionError) {
    return ApplicationFailure.retryable(`LLM did not answer: ${err.message}`, LLM_TIMEOUT);
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    if (status === 429 || status >= 500) {
      return ApplicationFailure.create({
        message: `LLM answered HTTP ${status}: ${err.message}`,
        type: LLM_RETRYABLE,
        // A zero delay would end Temporal's retries; "retry now" means the policy's own backoff.
        nextRetryDelay: retryAfterMs(err.headers) || undefined,
      });
    }
    return ApplicationFailure.nonRetryable(`LLM rejected the request with HTTP ${status}: ${err.message}`, LLM_REJECTED);
  }
  return err;
}

/** Honour Retry-After (seconds or an HTTP date); capped so a hostile header cannot park a run. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const value = headers?.get('retry-after-ms') ?? undefined;
  if (value && Number.isFinite(Number(value))) return clamp(Number(value));
  const retryAfter = headers?.get('retry-after');
  if (!retryAfter) return undefined;
  const seconds = Number(retryAfter);
  if (Number.isFinite(seconds)) return clamp(seconds * 1000);
  const date = Date.parse(retryAfter);
  return Number.isFinite(date) ? clamp(date - now) : undefined;
}

function clamp(ms: number): number {
  return Math.min(Math.max(ms, 0), 60_000);
}
