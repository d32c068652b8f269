// The scripted model's replies, written once: the tests, the offline demo model and the history
// recorder all script runs with these (see scripted-llm-server.ts for what each Reply makes the
// server send).
import type { RecordedRequest, Reply, Script, Usage } from './scripted-llm-server';

/** What any answered reply may add: a delay before it is sent, the token usage it reports. */
export interface ReplyExtras {
  delayMs?: number;
  usage?: Partial<Usage>;
}

/** The model calls a tool. */
export const tool = (name: string, args: object, extras: ReplyExtras = {}): Reply => ({
  action: { kind: 'tool', name, args },
  ...extras,
});

/** The model answers and the run ends. */
export const final = (answer: string, extras: ReplyExtras = {}): Reply => ({
  action: { kind: 'final', answer },
  ...extras,
});

/** The model hands the run to a person. */
export const escalate = (reason: string, extras: ReplyExtras = {}): Reply => ({
  action: { kind: 'escalate', reason },
  ...extras,
});

/** The model says something to the customer (a conversation run). */
export const message = (text: string, extras: ReplyExtras = {}): Reply => ({
  action: { kind: 'message', text },
  ...extras,
});

/** Raw message content instead of a JSON action: prose, broken JSON, a wrong shape. */
export const malformed = (content: string, extras: ReplyExtras = {}): Reply => ({ content, ...extras });

/** Raw tool calls (native tool calling), each `[function name, arguments text]`: malformed ones, several at once. */
export const toolCalls = (calls: Array<[string, string]>, extras: ReplyExtras = {}): Reply => ({
  toolCalls: calls.map(([name, args]) => ({ name, arguments: args })),
  ...extras,
});

/** A 200 answer with no message at all, reporting usage: the attempt is paid for and retried. */
export const noMessage = (usage: Partial<Usage> = {}): Reply => ({ noMessage: true, usage });

/** An HTTP 5xx whose error body reports usage (providers that bill partial work): paid for and retried. */
export const serverErrorWithUsage = (usage: Usage, status = 500): Reply => ({
  status,
  body: {
    error: { message: `scripted LLM: HTTP ${status} after partial work`, type: 'server_error', code: null, usage },
  },
});

// The refund scenario (user 42), step by step.
export const profile = (user_id = 42, extras?: ReplyExtras): Reply => tool('get_user_profile', { user_id }, extras);
export const billing = (user_id = 42, extras?: ReplyExtras): Reply => tool('get_user_billing', { user_id }, extras);
export const policy = (query = 'refund policy', extras?: ReplyExtras): Reply =>
  tool('search_policy', { query }, extras);
export const refund = (
  user_id: number,
  amount_usd = 49,
  reason = 'pro_monthly paid 10 days ago, within the 14-day window',
): Reply => tool('issue_refund', { user_id, amount_usd, reason });

/**
 * Replies by step (read from the `...:decide:<step>` key), so a retried or re-run step gets the
 * same answer. A list gives a step's successive attempts its entries in turn (the last repeats);
 * a function is called when the request arrives (a gate, a computed reply).
 */
export type StepReply = Reply | ((req: RecordedRequest) => Reply | Promise<Reply>);

export function byStep(steps: Record<number, StepReply | StepReply[]>, otherwise?: StepReply): Script {
  const attempts = new Map<number, number>();
  return async (req) => {
    const step = req.step ?? -1;
    const entry = steps[step] ?? otherwise;
    if (entry === undefined)
      return { status: 400, body: { error: { message: `scripted LLM: no reply for step ${step}` } } };
    const list = Array.isArray(entry) ? entry : [entry];
    const n = attempts.get(step) ?? 0;
    attempts.set(step, n + 1);
    const reply = list[Math.min(n, list.length - 1)]!;
    return typeof reply === 'function' ? reply(req) : reply;
  };
}
