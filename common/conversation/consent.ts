// The customer's consent to a write: what the run shows them (the exact call) and what counts as
// their yes. The workflow asks and waits (workflows/conversation/conversation.ts); nothing but the customer's
// next message after the question can consent, and anything short of an explicit yes declines.
import { stableJson } from '../tools/hash';
import { utf8Length } from '../text/utf8';
import type { Observation } from '../tools/observation';

export interface ConsentRequest {
  tool: string;
  args: Record<string, unknown>;
}

/**
 * The question, with the exact action: the tool and its arguments as one JSON object, whole, as the
 * call will send them. Only for a request `unshowable` passes: then no key or value holds any of
 * the characters that frame it (QUESTION_FRAMING), so what reads as the question's own structure is
 * the runtime's.
 */
export function consentQuestion(request: ConsentRequest): string {
  const what = request.tool.replace(/_/g, ' ');
  return `To go ahead I need your confirmation of this exact action: ${what} ${JSON.stringify(request.args)}. Reply "yes" to confirm; anything else cancels it.`;
}

/** How much of an action a customer is asked to read at once (characters of its arguments' JSON). */
export const CONSENT_LIMITS = { args_chars: 1000 } as const;

/** The characters the question's JSON is framed with: no key or value shown to the customer has one. */
export const QUESTION_FRAMING = '{}[]":,\\';

// An allowlist, not a list of what hides or fakes text: a list of look-alikes is never complete
// (U+05F4 ״, U+2E42, U+02F6, U+FF62… each passed one). A key or value is shown only when every
// character is a letter, a decimal digit, a single inner space or one of this ASCII punctuation,
// none of which the question uses as a delimiter.
const PUNCTUATION = "- . ' # / & ( ) @ + _ % $";
const SHOWN = /^[\p{L}\p{Nd}\p{Mn}\p{Mc} \-.'#/&()@+_%$]$/u;
// Modifier letters are letters but many imitate quotes and accents (U+02BA ʺ, U+02EE ˮ): only the
// Japanese iteration and length marks are shown.
const MODIFIER_SHOWN = /^[\u3005\u309D\u309E\u30FC-\u30FE\uFF70]$/u;
// Letters and marks that show nothing (Hangul fillers, the grapheme joiner, variation selectors).
const INVISIBLE = /^\p{Default_Ignorable_Code_Point}$/u;
// A combining mark is shown only on a letter, at most two in a row (Devanagari's vowel sign and
// nasal): on a digit, a space or punctuation (U+0308 after a digit reads as a quote) it is refused.
const MARK_OFF_LETTER = /(^|[^\p{L}\p{M}])\p{M}|\p{M}{3}/u;

/**
 * Why the customer could not be shown this action whole and unambiguously, or undefined when they
 * can. A call so refused is not asked: the model reads why (ok:false) and may propose a clean one.
 */
export function unshowable(request: ConsentRequest): string | undefined {
  const json = JSON.stringify(request.args);
  if (Array.from(json).length > CONSENT_LIMITS.args_chars)
    return `its arguments are ${Array.from(json).length} characters as JSON; a customer is asked about at most ${CONSENT_LIMITS.args_chars}`;
  return unshowableIn(request.args, 'arguments');
}

function unshowableIn(value: unknown, where: string): string | undefined {
  if (typeof value === 'string') return unshowableText(value, where);
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const why = unshowableIn(item, `${where}[${i}]`);
      if (why) return why;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const why = unshowableText(key, `a key of ${where}`) ?? unshowableIn(item, `${where}.${key}`);
      if (why) return why;
    }
  }
  return undefined;
}

function unshowableText(text: string, where: string): string | undefined {
  const at = `${where} has`;
  const odd = Array.from(text).find(
    (c) => !SHOWN.test(c) || INVISIBLE.test(c) || (/\p{Lm}/u.test(c) && !MODIFIER_SHOWN.test(c)),
  );
  if (odd !== undefined)
    return `${at} the character U+${odd.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}; a customer is shown only letters, digits, single spaces and ${PUNCTUATION}`;
  if (text !== text.normalize('NFC')) return `${at} letters not in their composed (NFC) form`;
  if (MARK_OFF_LETTER.test(text)) return `${at} a combining mark that is not on a letter`;
  if (/ {2}/.test(text)) return `${at} a run of spaces`;
  if (/^ | $/.test(text)) return `${at} a leading or trailing space`;
  return undefined;
}

/** What the model sees when a write was not asked: the customer could not be shown it whole. */
export function unshowableObservation(request: ConsentRequest, why: string): Observation {
  const data = {
    not_asked: true,
    detail: `the customer was not asked to confirm this action and it was not made: ${why}. Propose it again with plain values (letters, digits, single spaces and ${PUNCTUATION}) if that is what the customer wants`,
  };
  return observationOf(request, data, 'workflow');
}

// A yes is a short message made only of these words (after NFKC, dropping format characters,
// lower-casing, `. , !` as spaces), with a yes among them. A whitelist, not a list of negations:
// "yes, but…", a look-alike letter ("nоt" with a Cyrillic о) or any other word makes it no consent,
// and the customer can say yes again. Nothing but letters, spaces, apostrophes and `. , !` may stand
// in it: a yes is a statement, so a question mark (any script's), an emoji or any other symbol
// ("Confirmed?", "yes 👎") makes it none.
const STATEMENT = /^[\p{L}\s.,!’'ʼ]*$/u;
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
  // Zero-width and format characters dropped: what the customer sees is what counts.
  const seen = text.normalize('NFKC').replace(/\p{Cf}/gu, '');
  if (!STATEMENT.test(seen)) return false;
  const words = seen
    .toLowerCase()
    .replace(/[’'ʼ]/g, '')
    .split(/[^\p{L}]+/u)
    .filter(Boolean);
  if (words.length === 0 || words.length > 12) return false;
  return words.some((word) => YES_WORDS.has(word)) && words.every((word) => YES_WORDS.has(word) || COURTESY.has(word));
}

/** What the model sees when the customer did not say yes: the write was not made. */
export function declinedObservation(request: ConsentRequest, reply: string): Observation {
  const data = {
    declined: true,
    detail: 'the customer did not confirm this action; it was not made',
    customer_reply: reply.slice(0, 500),
  };
  return observationOf(request, data, 'customer');
}

function observationOf(request: ConsentRequest, data: Record<string, unknown>, source: string): Observation {
  return {
    tool: request.tool,
    ok: false,
    data,
    source,
    bytes: utf8Length(stableJson(data)),
    truncated: false,
  };
}
