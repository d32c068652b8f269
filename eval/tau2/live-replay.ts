// The scripted "live" model of `--mode live-scripted`: one OpenAI-compatible server plays both
// sides of a τ² task through the live path. The agent's side answers each decision with the next
// ground-truth call (replay-plan.ts) in native tool-call form (choices[0].message.tool_calls) when
// the request offers `tools`, or as a JSON action when it asks for a JSON object; after the last
// call it asks whether there is anything else, and gives a final answer once the customer answered.
// The customer's side is τ²'s user simulator: it opens with the task's reason for calling and what
// it knows, answers "yes" to a consent question and ends with ###STOP### when asked for anything
// else. Every decision request is recorded with the call it was answered with, for the identifier
// check (id-check.ts); usage reports the request's estimated prompt tokens and, as a provider's
// prefix cache would, the part of them shared with the run's previous request.
import { estimateTokens } from '../../common/cost/cost';
import type { RecordedRequest, Reply, Usage } from '../../offline-model/scripted-llm-server';
import { CONSENT_YES } from './customer';
import type { DecisionRecord } from './id-check';
import { FINAL_FUNCTION, moveOf, REPLAY_FINAL_ANSWER, REPLAY_OFF_PLAN_ANSWER } from './replay-model';
import type { ReplayPlan } from './replay-plan';
import type { Tau2Task } from './task';
import { reasonForCall } from './task';

/** The agent's question after the ground truth's last call: the customer ends the conversation on it. */
export const ANYTHING_ELSE = 'Your request is taken care of. Is there anything else I can help you with?';
export const STOP_MARK = '###STOP###';
/** OpenAI's prompt cache: prompts from 1024 tokens, cached in blocks of 128 tokens. */
const CACHE_MIN_TOKENS = 1024;
const CACHE_BLOCK_TOKENS = 128;
const COMPLETION_TOKENS = 30;

/** One run's scripted model and what it recorded. */
export interface LiveReplay {
  script: (req: RecordedRequest) => Reply;
  /** The run's decision requests in order, each with the ground-truth call it was answered with. */
  decisions: DecisionRecord[];
  /** Per decision: estimated prompt tokens and the cached part (the prefix shared with the previous request). */
  usage: Array<{ prompt_tokens: number; cached_tokens: number }>;
  customerRequests: number;
  /** Decision requests that offered native `tools` with parallel_tool_calls false. */
  nativeRequests: number;
}

import type { ChatMessage } from './replay-model';

export function liveReplay(task: Tau2Task, plan: ReplayPlan): LiveReplay {
  const state: LiveReplay = {
    script: () => ({ status: 500 }),
    decisions: [],
    usage: [],
    customerRequests: 0,
    nativeRequests: 0,
  };
  let previousPrompt = '';
  state.script = (req: RecordedRequest): Reply => {
    if (req.idempotencyKey?.includes(':customer:')) {
      state.customerRequests++;
      return { content: customerReply(task, messagesOf(req)) };
    }
    const prompt = promptText(req.body);
    const usage = usageOf(prompt, previousPrompt);
    previousPrompt = prompt;
    state.usage.push({ prompt_tokens: usage.prompt_tokens, cached_tokens: usage.prompt_tokens_details.cached_tokens });
    const body = req.body as { tools?: unknown; parallel_tool_calls?: unknown };
    const native = Array.isArray(body.tools);
    if (native && body.parallel_tool_calls === false) state.nativeRequests++;
    const move = moveOf(plan, req);
    const record: DecisionRecord = { text: JSON.stringify(req.body) };
    state.decisions.push(record);
    if ('call' in move) {
      record.call = { name: move.call.name, args: move.call.args };
      return native
        ? { toolCalls: [{ name: move.call.name, arguments: JSON.stringify(move.call.args) }], usage }
        : { action: { kind: 'tool', name: move.call.name, args: move.call.args }, usage };
    }
    if ('off' in move) return finalReply(native, REPLAY_OFF_PLAN_ANSWER, usage);
    // The ground truth is done: ask once whether there is anything else, then end.
    if (!record.text.includes(ANYTHING_ELSE))
      return native ? { content: ANYTHING_ELSE, usage } : { action: { kind: 'message', text: ANYTHING_ELSE }, usage };
    return finalReply(native, REPLAY_FINAL_ANSWER, usage);
  };
  return state;
}

function finalReply(native: boolean, answer: string, usage: Partial<Usage>): Reply {
  return native
    ? { toolCalls: [{ name: FINAL_FUNCTION, arguments: JSON.stringify({ answer }) }], usage }
    : { action: { kind: 'final', answer }, usage };
}

function messagesOf(req: Pick<RecordedRequest, 'body'>): ChatMessage[] {
  const messages: unknown = (req.body as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? (messages as ChatMessage[]) : [];
}

/**
 * τ²'s user simulator, scripted: the simulator is the "assistant" of its own chat and the agent's
 * words are its "user" messages (customer.ts). Opening: the reason for calling and what it knows;
 * a consent question: yes; the agent asking for anything else: ###STOP###; anything else: go ahead.
 */
export function customerReply(task: Tau2Task, messages: readonly ChatMessage[]): string {
  const agentTurns = messages.filter((m) => m.role === 'user');
  const spoke = messages.some((m) => m.role === 'assistant');
  if (!spoke) {
    const { instructions } = task.user_scenario;
    const known = typeof instructions === 'string' ? undefined : instructions.known_info;
    return [reasonForCall(task), known].filter(Boolean).join(' ');
  }
  const last = String(agentTurns.at(-1)?.content ?? '');
  if (last.includes(ANYTHING_ELSE)) return STOP_MARK;
  if (last.includes('The agent asks you to confirm')) return CONSENT_YES;
  return 'Thank you. Please go ahead with what I asked for.';
}

/** The prompt as a provider reads it: the tool schemas, then the messages in order. */
export function promptText(body: unknown): string {
  const b = body as { tools?: unknown; messages?: unknown; response_format?: unknown } | undefined;
  return JSON.stringify(b?.tools ?? []) + JSON.stringify(b?.messages ?? []);
}

/** Estimated prompt tokens, and the cached part as OpenAI's cache would serve it from the previous request. */
export function usageOf(
  prompt: string,
  previous: string,
): Usage & { prompt_tokens_details: { cached_tokens: number } } {
  const promptTokens = estimateTokens(prompt.length);
  const shared = estimateTokens(commonPrefix(prompt, previous)) - 1; // a partial last token is not shared
  const cached =
    promptTokens >= CACHE_MIN_TOKENS && shared >= CACHE_MIN_TOKENS
      ? Math.floor(shared / CACHE_BLOCK_TOKENS) * CACHE_BLOCK_TOKENS
      : 0;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: COMPLETION_TOKENS,
    total_tokens: promptTokens + COMPLETION_TOKENS,
    prompt_tokens_details: { cached_tokens: cached },
  };
}

export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
