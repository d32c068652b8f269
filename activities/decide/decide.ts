// The decision step (Think): one Chat Completions call through the `openai` client. It returns
// the raw text and token usage; the workflow validates the text. Temporal owns the retries, so
// the HTTP client never retries on its own, and every failure is classified for the retry policy.
// The answer is untrusted and bounded here, before it reaches the history; error messages are
// scrubbed of secrets (an error body may echo the API key).
// Cost: every attempt that reported usage is priced here and added to a ledger that travels from
// attempt to attempt in the heartbeat details (a failed attempt's report carries its last ones) and
// out with the final success, failure or cancellation, so the run charges each attempt exactly once.
// With a dollar budget, every attempt (retries too) is checked against what its decision has left
// after the earlier attempts' charges before it is sent.
// Requests: Temporal's attempts include retries lost to a hung worker, so each attempt says in the
// same ledger that it is sending before it sends, and a decision makes at most `max_requests`
// requests (common/cost/llm-requests.ts); the failure of the last one is final.
import { Context, ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import type * as OpenAiModule from 'openai';
import type OpenAI from 'openai';
import { usdLeft } from '../../common/cost/budget';
import type { AttemptCharge } from '../../common/cost/budget';
import { attemptCap, chargedTokens, COMPLETION_CAP_TOKENS, estimateTokens, ledgerUsd } from '../../common/cost/cost';
import type { LlmPricing } from '../../common/cost/cost';
import type { DecideInput, DecideLedger, DecideOutput } from '../../common/types';
import { AttemptBook } from './attempt-book';
import { errorUsageFetch } from './error-usage-fetch';
import { limitedFetch, responseTooLarge } from './limited-fetch';
import type { LlmConfig } from './llm-config';
import type { LlmLimiter } from '../limiter/llm-lease';
import { reservedTokens } from '../limiter/limiter-settings';
import { scrubSecrets, secretsFromEnv } from '../secrets';
import { nativeSystemPromptOf, SYSTEM_PROMPT, systemPromptOf } from './system-prompt';
import { modelPayload } from '../../common/model-view/decision-payload';
import { functionNames, renderView } from '../../common/model-view/model-view';
import type { ChatMessage, ToolMode, ViewRef, ViewSource } from '../../common/model-view/model-view';
import { registryOf } from '../../common/tools/index';
import { actionTextOf, toolsFor } from './native-tools';
import type { AnswerMessage, FunctionTool } from './native-tools';
import { domainOf } from '../../domains/index';
import { unpricedModelMessage } from '../../runtime/prices';
import {
  LLM_BUDGET,
  LLM_REJECTED,
  LLM_RETRYABLE,
  LLM_TIMEOUT,
  UNPRICED_MODEL,
  modelViewQuery,
} from '../../common/agent-messages';
import { reportDecisionDetails } from '../../runtime/telemetry/decision-details';
import { takeView, viewReads } from './view-handoff';

const HEARTBEAT_EVERY_MS = 250;
/**
 * The largest model answer kept (UTF-8 bytes). An action is a few hundred bytes; anything above
 * this ends the run as invalid_action:too_large and only a preview enters the history.
 */
export const MAX_ANSWER_BYTES = 32 * 1024;
export const ANSWER_PREVIEW_CHARS = 2048;
const MAX_MODEL_NAME_CHARS = 200;
/**
 * The largest HTTP response body read at all: room for a capped answer even if every character
 * were JSON-escaped (6x), plus the envelope. Larger bodies are not read into memory.
 */
export const MAX_RESPONSE_BYTES = 6 * MAX_ANSWER_BYTES + 64 * 1024;

/** `openai` takes a noticeable part of a worker's start to load: it is loaded by the first decision instead. */
let openaiModule: typeof OpenAiModule | undefined;
function openai(): typeof OpenAiModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (openaiModule ??= require('openai') as typeof OpenAiModule);
}

/** What a decision asks the model with: the worker's model, its client, its rate limit, the secrets kept out of what it returns. */
interface Llm {
  config: LlmConfig;
  client(): OpenAI;
  /** The fleet-wide rate limit (activities/limiter/llm-lease.ts), when the worker has one. */
  limiter: LlmLimiter | undefined;
  secrets: readonly string[];
}

export function createDecide(config: LlmConfig, limiter?: LlmLimiter) {
  let openaiClient: OpenAI | undefined;
  const llm: Llm = {
    config,
    limiter,
    secrets: [config.apiKey, ...secretsFromEnv()],
    client: () =>
      (openaiClient ??= new (openai().default)({
        apiKey: config.apiKey,
        baseURL: config.baseURL,
        maxRetries: 0,
        timeout: config.timeoutMs,
        fetch: errorUsageFetch(limitedFetch(MAX_RESPONSE_BYTES)),
      })),
  };
  return async function decide(input: DecideInput): Promise<DecideOutput> {
    const ctx = Context.current();
    const book = new AttemptBook(ctx, input, config.price);
    if (book.turn === 'spent') throw book.spent();
    // Heartbeats carry cancellation to us (the signal aborts the HTTP request at once) and the ledger.
    // With a limiter, asking it for a lease counts as a request: a limiter that does not answer
    // ends the decision after llm_max_attempts waits, not after every attempt a hung worker adds.
    if (limiter) book.sending();
    const beat = setInterval(() => ctx.heartbeat(book.details()), HEARTBEAT_EVERY_MS);
    try {
      return await answerOf(llm, input, ctx, book);
    } catch (err) {
      if (err instanceof ApplicationFailure) throw book.final(err);
      // A 2xx answer too large to even read is the model's answer being too large.
      const tooLarge = responseTooLarge(err);
      if (tooLarge && !ctx.cancellationSignal.aborted)
        return {
          text: '',
          model: '',
          usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
          too_large: { bytes: tooLarge.bytes },
          attempts: book.ledger,
        };
      // An error answer that reported usage (some providers do on a 5xx after partial work) is paid for too.
      if (err instanceof openai().APIError && !ctx.cancellationSignal.aborted)
        await book.chargeFailed((err.error as { usage?: unknown } | undefined)?.usage);
      throw book.final(classify(err, ctx, llm.secrets, book.details()));
    } finally {
      clearInterval(beat);
    }
  };
}

/** One attempt: the request, its cap (what the decision's dollars left pay for), the model's answer, charged. */
async function answerOf(llm: Llm, input: DecideInput, ctx: Context, book: AttemptBook): Promise<DecideOutput> {
  const request = await requestOf(input, llm.config.toolMode ?? 'native', ctx);
  // What the dollar budget and the rate limit reserve for: every character the request sends.
  const prompt = request.chars;
  const maxCompletion =
    input.left_usd === undefined ? input.max_completion_tokens : affordableCap(llm.config, input, prompt, book.ledger);
  book.estimate.prompt_tokens = estimateTokens(prompt) + overheadTokens();
  book.estimate.completion_tokens = maxCompletion ?? COMPLETION_CAP_TOKENS;
  const completion = await completionOf(llm, request, maxCompletion, ctx, book);
  // The GenAI span of a traced worker (worker/genai-spans.ts); nothing listens otherwise.
  reportDecisionDetails(ctx, {
    messages: request.messages,
    finishReasons: (completion.choices ?? []).flatMap((c) =>
      typeof c.finish_reason === 'string' ? [c.finish_reason] : [],
    ),
  });
  const answer = completion.choices?.[0]?.message;
  const content = request.tools
    ? answer && request.actionText(answer)
    : (answer?.content ?? (typeof answer?.refusal === 'string' ? answer.refusal : undefined));
  if (typeof content !== 'string') {
    // An answer without a message (no choices, a null content) is malformed: it is paid for
    // if it reported usage, and retried.
    await book.chargeFailed(completion.usage);
    throw ApplicationFailure.create({
      message: 'LLM answered without a message (no choices or no content)',
      type: LLM_RETRYABLE,
      details: [book.details()],
    });
  }
  book.charge(completion.usage, 'ok');
  // The answer goes into the history: an endpoint that echoes the API key puts no secret there.
  const scrubbed = scrubSecrets(content, llm.secrets);
  const model = typeof completion.model === 'string' ? scrubSecrets(completion.model, llm.secrets) : completion.model;
  // The run counts the request's fixed part in its next views' size (the context budget).
  return {
    ...boundedOutput(scrubbed, model, completion.usage, book.estimate),
    attempts: book.ledger,
    fixed_chars: request.fixedChars,
  };
}

/** The Chat Completions call, through the fleet's rate limit when the worker has one. */
function completionOf(
  llm: Llm,
  request: DecisionRequest,
  maxCompletion: number | undefined,
  ctx: Context,
  book: AttemptBook,
): Promise<OpenAI.Chat.Completions.ChatCompletion> {
  const call = () => {
    if (!book.sent.includes(book.attempt)) book.sending();
    return llm.client().chat.completions.create(
      {
        model: llm.config.model,
        temperature: 0,
        messages: request.messages as OpenAI.Chat.Completions.ChatCompletionMessageParam[],
        ...(request.tools
          ? { tools: request.tools as OpenAI.Chat.Completions.ChatCompletionTool[], parallel_tool_calls: false }
          : { response_format: { type: 'json_object' as const } }),
        ...(maxCompletion !== undefined ? { max_completion_tokens: maxCompletion } : {}),
      },
      { signal: ctx.cancellationSignal, headers: { 'Idempotency-Key': book.idempotencyKey } },
    );
  };
  if (!llm.limiter) return call();
  return llm.limiter.run({
    tokens: reservedTokens(request.chars, maxCompletion),
    signal: ctx.cancellationSignal,
    call,
    usedTokens: (c) => c.usage?.total_tokens,
    rateLimited: (err) =>
      err instanceof openai().APIError && err.status === 429 ? (retryAfterMs(err.headers) ?? 0) : undefined,
    // The limiter's own failures (LlmLimiterUnavailable/Full) carry the attempts charged so far.
    failureDetails: () => [book.details()],
  });
}

/** The cap this attempt can pay for with what its decision has left; throws when none fits. */
function affordableCap(
  config: LlmConfig,
  input: DecideInput,
  promptChars: number,
  ledger: readonly AttemptCharge[],
): number {
  const left = usdLeft(input.left_usd!, ledgerUsd(ledger));
  // A dollar budget cannot be kept on a model without a price (llm_pricing refuses such runs first).
  if (!config.price)
    throw ApplicationFailure.create({
      message: unpricedModelMessage(config.model),
      type: LLM_BUDGET,
      nonRetryable: true,
      details: [{ attempts: [...ledger] } satisfies DecideLedger],
    });
  const promptTokens = estimateTokens(promptChars) + overheadTokens();
  const cap = attemptCap(left, promptTokens, config.price, input.max_completion_tokens ?? COMPLETION_CAP_TOKENS);
  if (cap !== undefined) return cap;
  throw ApplicationFailure.create({
    message: `LLM attempt not sent: the dollar budget left for this decision ($${Math.max(0, left).toFixed(6)}) cannot pay for it`,
    type: LLM_BUDGET,
    nonRetryable: true,
    details: [{ attempts: [...ledger] } satisfies DecideLedger],
  });
}

/** One decision's request: its messages, the tools in native mode, and how its answer maps onto the contract. */
interface DecisionRequest {
  messages: ChatMessage[];
  tools?: FunctionTool[];
  /** Characters sent (the messages and the tools): what the prompt's tokens are estimated from. */
  chars: number;
  /** Of those, the system message's and the tools': the part outside the view (DecideOutput.fixed_chars). */
  fixedChars: number;
  actionText(message: AnswerMessage): string | undefined;
}

/**
 * The request for a decision. With a view (the workflow planned one), the whole run as chat messages,
 * rendered from the run's state read by the model_view Query (not recorded in the history); without
 * (a decision an older worker scheduled), the payload as one user message. Native mode offers the
 * tools as functions; json mode lists them and asks for one JSON object.
 */
async function requestOf(input: DecideInput, mode: ToolMode, ctx: Context): Promise<DecisionRequest> {
  const { payload } = input;
  const domain = domainOf(payload);
  // The model reads each tool's description and schema; the history kept only their names.
  const described = modelPayload(payload, domain);
  const catalog = described.available_tools;
  const conversation = payload.conversation !== undefined;
  const names = functionNames(catalog.map((entry) => entry.name));
  const byFunction = new Map([...names].map(([tool, fn]) => [fn, tool]));
  const native = mode === 'native';
  // The stable prefix first: the system prompt (runtime rules and the domain's policy), then the tools.
  const system = native
    ? nativeSystemPromptOf(payload)
    : input.view
      ? `${systemPromptOf(payload)}\navailable_tools: ${JSON.stringify(catalog)}`
      : systemPromptOf(payload);
  let body: ChatMessage[];
  if (input.view) {
    const source = await viewOf(ctx, input.view);
    const windDown = payload.wind_down ? JSON.stringify({ wind_down: payload.wind_down }) : undefined;
    // The domain's registry redacts (an MCP result carries its own sensitive paths); which results are
    // authentications (never compacted, one labelled) the Query's answer names, MCP tools included.
    body = renderView(source, input.view, registryOf(domain.tools), names, mode, windDown);
  } else {
    body = [{ role: 'user', content: JSON.stringify(described) }];
  }
  const head: ChatMessage = { role: 'system', content: system };
  const tools = native ? toolsFor(catalog, names, conversation) : undefined;
  // Counted as rendered, each part once: the messages' JSON is the system message's, then a comma
  // and the body's own JSON without its brackets, in brackets.
  const bodyChars = JSON.stringify(body).length;
  const messagesChars = JSON.stringify(head).length + (body.length > 0 ? bodyChars + 1 : 2);
  const chars = messagesChars + (tools ? JSON.stringify(tools).length : 0);
  return {
    messages: [head, ...body],
    ...(tools ? { tools } : {}),
    chars,
    // Everything but the view's messages, each of which the plan counts with its comma (model-view.ts planView).
    fixedChars: chars - (bodyChars - 1),
    actionText: (message) => actionTextOf(message, byFunction, conversation),
  };
}

/**
 * The run's state the view is rendered from: handed over by the workflow when it scheduled this
 * decision on this worker (view-handoff.ts), else a Query on the decision's own run (its workflow answers from memory).
 */
async function viewOf(ctx: Context, view: ViewRef): Promise<ViewSource> {
  const run = ctx.info.workflowExecution;
  if (!run)
    throw ApplicationFailure.create({
      message: 'decide ran outside a workflow: no run to read the view of',
      nonRetryable: true,
    });
  const handed = takeView(run, ctx.info.activityId, view);
  if (handed) {
    viewReads.handoff++;
    return handed;
  }
  viewReads.query++;
  try {
    return await ctx.client.workflow.getHandle(run.workflowId, run.runId).query(modelViewQuery, view);
  } catch (err) {
    // Nothing was sent: the attempt is retried (the run's worker may be busy or restarting).
    throw ApplicationFailure.create({
      message: `could not read the run's view (model_view Query): ${err instanceof Error ? err.message.slice(0, 300) : String(err).slice(0, 300)}`,
      type: LLM_RETRYABLE,
    });
  }
}

/**
 * The llm_pricing local activity: the worker's model and price, which a run with a dollar budget
 * records once in its history and reserves with (the workflow never reads the price table itself).
 */
export function createLlmPricing(config: LlmConfig) {
  return async function llm_pricing(): Promise<LlmPricing> {
    // The one place an unpriced model is refused: a run with a dollar budget, which cannot be kept.
    if (!config.price)
      throw ApplicationFailure.create({
        message: unpricedModelMessage(config.model),
        type: UNPRICED_MODEL,
        nonRetryable: true,
      });
    return { model: config.model, ...config.price, overhead_tokens: overheadTokens() };
  };
}

/** The estimated tokens of the system prompt and the message framing, on top of a decision's payload. */
function overheadTokens(): number {
  return estimateTokens(SYSTEM_PROMPT.length) + 16;
}

/** What the workflow gets from the HTTP answer: bounded text, a bounded model name, sane token counts. */
export function boundedOutput(
  content: unknown,
  model: unknown,
  usage: unknown,
  estimate = { prompt_tokens: 0, completion_tokens: 0 },
): DecideOutput {
  const text = typeof content === 'string' ? content : '';
  // The counts the attempt is charged (an unusable one estimated), so the run's tokens agree with its cost.
  const { prompt_tokens, completion_tokens, cached_prompt_tokens, estimated } = chargedTokens(usage, estimate);
  const total = tokens(((usage ?? {}) as Record<string, unknown>).total_tokens);
  const output: DecideOutput = {
    text,
    model: typeof model === 'string' ? model.slice(0, MAX_MODEL_NAME_CHARS) : '',
    usage: {
      prompt_tokens,
      completion_tokens,
      total_tokens: estimated ? prompt_tokens + completion_tokens : total,
      ...(cached_prompt_tokens !== undefined ? { cached_prompt_tokens } : {}),
    },
  };
  // Cheap check first: a string of n UTF-16 units has at most 3n UTF-8 bytes.
  if (text.length * 3 <= MAX_ANSWER_BYTES) return output;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= MAX_ANSWER_BYTES) return output;
  return { ...output, text: text.slice(0, ANSWER_PREVIEW_CHARS), too_large: { bytes } };
}

/** A token count from an untrusted server: a non-negative safe integer, else 0. */
function tokens(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

function classify(err: unknown, ctx: Context, secrets: readonly string[], ledger: DecideLedger): unknown {
  const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = openai();
  // Every failure carries the attempts charged so far: the last one is what the run sees.
  const details = [ledger];
  // A cancelled activity: a CancelledFailure, so Temporal records a cancellation; its details carry
  // the attempts charged so far, so a run cut off by a cancel or a deadline still adds them.
  if (err instanceof APIUserAbortError || ctx.cancellationSignal.aborted) {
    const reason: unknown = ctx.cancellationSignal.reason;
    return new CancelledFailure(reason instanceof Error ? reason.message : 'cancelled', details);
  }
  const message = (err: Error) => scrubSecrets(err.message, secrets).slice(0, 1000);
  if (err instanceof APIConnectionTimeoutError || err instanceof APIConnectionError) {
    return ApplicationFailure.create({ message: `LLM did not answer: ${message(err)}`, type: LLM_TIMEOUT, details });
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    if (status === 429 || status >= 500) {
      return ApplicationFailure.create({
        message: `LLM answered HTTP ${status}: ${message(err)}`,
        type: LLM_RETRYABLE,
        details,
        // A zero delay would end Temporal's retries; "retry now" means the policy's own backoff.
        nextRetryDelay: retryAfterMs(err.headers) || undefined,
      });
    }
    return ApplicationFailure.create({
      message: `LLM rejected the request with HTTP ${status}: ${message(err)}`,
      type: LLM_REJECTED,
      nonRetryable: true,
      details,
    });
  }
  // Anything else (a malformed answer the client could not parse, a bug): a fresh failure with a
  // scrubbed message, so neither the original message nor its stack carries a secret out.
  const what =
    err instanceof Error ? `${err.name}: ${message(err)}` : scrubSecrets(String(err), secrets).slice(0, 1000);
  return ApplicationFailure.create({ message: `LLM call failed: ${what}`, type: LLM_RETRYABLE, details });
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
