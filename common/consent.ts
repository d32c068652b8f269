// The customer's consent to a write: what the run shows them (the exact call) and what counts as
// their yes. The workflow asks and waits (workflows/conversation.ts); nothing but the customer's
// next message after the question can consent, and anything short of an explicit yes declines.
import { stableJson } from './hash';
import { utf8Length } from './utf8';
import type { Observation } from './observation';

export interface ConsentRequest {
  tool: string;
  args: Record<string, unknown>;
}

/** The question, with the exact action: the tool and every argument as the call will send them. */
export function consentQuestion(request: ConsentRequest): string {
  const what = request.tool.replace(/_/g, ' ');
  // Each value as JSON: an argument the model wrote cannot break the line or forge a second question
  // (newlines and quotes come out escaped); the whole is bounded like any agent message.
  const args = Object.entries(request.args)
    .map(
      ([key, value]) =>
        `${key}: ${oneLine(typeof value === 'string' && /^[\w#@.\- ]*$/.test(value) ? value : JSON.stringify(value))}`,
    )
    .join('; ');
  return `To go ahead I need your confirmation of this exact action: ${what} (${args}). Reply "yes" to confirm; anything else cancels it.`;
}

// A yes is a short message made only of these words (after NFKC, dropping format characters,
// lower-casing, punctuation as spaces), with a yes among them. A whitelist, not a list of negations:
// "yes, but…", a look-alike letter ("nоt" with a Cyrillic о) or any other word makes it no consent,
// and the customer can say yes again.
const YES_WORDS = new Set(['yes', 'y', 'yeah', 'yep', 'confirm', 'confirmed']);
const COURTESY = new Set([
  'please',
  'go',
  'ahead',
  'do',
  'it',
  'that',
  'thats',
  'is',
  'correct',
  'i',
  'thanks',
  'thank',
  'you',
  'proceed',
  'sure',
  'ok',
  'okay',
  'sounds',
  'good',
  'fine',
]);

/** Whether the customer's message is an explicit yes (docs/conversations.md lists the rule). */
export function isExplicitYes(text: string): boolean {
  const words = text
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '') // zero-width and format characters: what the customer sees is what counts
    .toLowerCase()
    .replace(/[’'ʼ]/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  if (words.length === 0 || words.length > 12) return false;
  return words.some((word) => YES_WORDS.has(word)) && words.every((word) => YES_WORDS.has(word) || COURTESY.has(word));
}

function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters out is the point
  const flat = text.replace(/[\u0000-\u001F\u007F-\u009F\u2028\u2029]/g, ' ');
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
}

/** What the model sees when the customer did not say yes: the write was not made. */
export function declinedObservation(request: ConsentRequest, reply: string): Observation {
  const data = {
    declined: true,
    detail: 'the customer did not confirm this action; it was not made',
    customer_reply: reply.slice(0, 500),
  };
  return {
    tool: request.tool,
    ok: false,
    data,
    source: 'customer',
    bytes: utf8Length(stableJson(data)),
    truncated: false,
  };
}
