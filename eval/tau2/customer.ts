// The customer of a τ² task's conversation. Replay: a scripted customer that opens with the task's
// reason for calling, answers `yes` to every action the agent asks consent for, and a short line to
// anything else. Live: an LLM playing the customer from τ²'s user instructions (the same endpoint as
// the agent's model; offline tests point both at the scripted LLM), which ends the conversation
// with τ²'s ###STOP### mark.
import OpenAI from 'openai';
import type { SayRequest, Turn } from '../../common/conversation/conversation';
import type { Tau2Task } from './task';
import { customerInstructions, reasonForCall } from './task';

export interface Customer {
  /** The customer's first message. */
  opening(): Promise<SayRequest>;
  /** The customer's answer to the agent's latest turn, given the turns kept so far. */
  reply(turn: Turn, turns: readonly Turn[]): Promise<SayRequest>;
}

export const CONSENT_YES = 'yes';
export const SCRIPTED_CUSTOMER_REPLY = 'Thank you. Please go ahead with what I asked for.';

export function scriptedCustomer(task: Tau2Task): Customer {
  return {
    opening: () => Promise.resolve({ text: reasonForCall(task) }),
    reply: (turn) => Promise.resolve({ text: turn.consent ? CONSENT_YES : SCRIPTED_CUSTOMER_REPLY }),
  };
}

/** τ²'s marks in a simulated user's message: the conversation is over for the customer. */
const END_MARKS = ['###STOP###', '###TRANSFER###', '###OUT-OF-SCOPE###'];

export function customerSystemPrompt(task: Tau2Task): string {
  return [
    'You play a customer talking to a customer-service agent of an online retail shop. Follow these instructions:',
    '',
    customerInstructions(task),
    '',
    'Rules:',
    '- Write one short message at a time, as the customer would; give only what the current step needs.',
    '- Never invent information the instructions do not give you; if asked for it, say you do not know.',
    '- When the agent asks you to confirm an action, answer exactly "yes" if it is what you want, otherwise say no and why.',
    `- When your request is fully handled (or cannot be), write ${END_MARKS[0]} alone to end the conversation.`,
    `- If you are transferred to a human agent, write ${END_MARKS[1]} alone.`,
  ].join('\n');
}

export interface CustomerLlm {
  baseURL?: string;
  apiKey: string;
  model: string;
}

/** The LLM customer of one run; its requests carry `<workflowId>:customer:<turn>` as their key. */
export function llmCustomer(task: Tau2Task, llm: CustomerLlm, workflowId: string): Customer {
  const client = new OpenAI({ apiKey: llm.apiKey, ...(llm.baseURL ? { baseURL: llm.baseURL } : {}), maxRetries: 3 });
  const ask = async (turns: readonly Turn[], key: string): Promise<SayRequest> => {
    // The simulator is the "assistant" of its own chat: the agent's words are its input.
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'system', content: customerSystemPrompt(task) },
      ...turns.map((t): OpenAI.Chat.ChatCompletionMessageParam =>
        t.from === 'agent' ? { role: 'user', content: agentText(t) } : { role: 'assistant', content: t.text },
      ),
    ];
    if (messages.length === 1) messages.push({ role: 'user', content: 'Hello! How can I help you today?' });
    const completion = await client.chat.completions.create(
      { model: llm.model, messages },
      { headers: { 'Idempotency-Key': `${workflowId}:customer:${key}` } },
    );
    const text = (completion.choices[0]?.message.content ?? '').trim();
    if (END_MARKS.some((mark) => text.includes(mark))) {
      const rest = END_MARKS.reduce((t, mark) => t.split(mark).join(''), text).trim();
      return { ...(rest ? { text: rest } : {}), end: true };
    }
    return { text: text || 'Sorry, could you say that again?' };
  };
  return {
    opening: () => ask([], 'opening'),
    reply: (turn, turns) => ask(turns, String(turn.n)),
  };
}

function agentText(turn: Turn): string {
  if (!turn.consent) return turn.text;
  return `${turn.text}\n(The agent asks you to confirm: ${turn.consent.tool} ${JSON.stringify(turn.consent.args)})`;
}
