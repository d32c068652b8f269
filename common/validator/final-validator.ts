// The final validator (production guide, step 6): before a final answer is accepted, every figure it
// states (an amount, a date, a plan, a percentage, a day count) must appear in an observation of this
// run. Pure and deterministic: it runs inside the workflow, and the eval harness can score answers
// with the same code. It checks figures, not meaning: "USD 49.00" is supported by any observation
// holding the number 49, whatever that number described there (but never by an id, a key or a time
// of day). Which phrasings it reads: common/validator/answer-claims.ts.
import type { Observation } from '../tools/observation';
import { stableJson } from '../tools/hash';
import { utf8Length } from '../text/utf8';
import { normaliseText } from './answer-text';
import { CURRENCY_CODES, datesIn, extractClaims, numberKey, readNumber, wordsOf } from './answer-claims';
import type { Claim, ClaimKind } from './answer-claims';
import { DIGIT_NUMBER, readDigits, WORD_NUMBER } from './number-reading';

export { extractClaims };
export type { Claim, ClaimKind };

/** off: never checked; warn: checked, recorded in the result, accepted; enforce: bounced once, then unsupported_answer. */
export const VALIDATOR_MODES = ['off', 'warn', 'enforce'] as const;
export type ValidatorMode = (typeof VALIDATOR_MODES)[number];

/**
 * The default: enforce for runs allowed a tool whose results state facts an answer repeats (an
 * amount refunded), warn otherwise.
 */
export function validatorModeFor(
  input: { validator?: ValidatorMode; allow: readonly string[] },
  registry: Readonly<Record<string, { statesFacts?: boolean }>>,
): ValidatorMode {
  const statesFacts = (name: string) =>
    Object.prototype.hasOwnProperty.call(registry, name) && registry[name]!.statesFacts === true;
  return input.validator ?? (input.allow.some(statesFacts) ? 'enforce' : 'warn');
}

/** A claim as results and observations name it. */
export interface ClaimText {
  kind: ClaimKind;
  text: string;
}

/** Where the validator's own observation comes from; never evidence for a later answer. */
export const VALIDATOR_SOURCE = 'runtime:final-validator';
export const VALIDATOR_TOOL = 'final';

/** Bounds on what the validator reports (the answer is model text: up to 32 KiB). */
export const MAX_REPORTED_CLAIMS = 20;

// --- the evidence ---

/** Keys whose values identify things (a user, a refund, an idempotency key): never figures. */
const ID_KEY = /(?:^|[_-])(?:id|ids|key|keys|uuid|guid|hash|fence|token|etag|nonce|seq)$/i;
/** camelCase and CAPS ends: userId, userID, apiKey. */
const ID_KEY_CAMEL = /[a-z](?:Id|ID|Ids|IDs|Key|KEY|Uuid|UUID|Hash)$/;
const isIdKey = (key: string) => ID_KEY.test(key) || ID_KEY_CAMEL.test(key);
/** Keys whose numbers are hundredths: price_cents 4999 is 49.99. */
const CENTS_KEY = /cents?$|_minor$|minor_units?$/i;
/** Keys under which observations name plans: their words are plan names. */
const PLAN_KEY = /plan|tier|subscription|membership|package|sku|product/i;

/** The figures observations hold: numbers, dates and words, from values and keys alike. */
export function collectEvidence(observations: readonly Observation[]): Set<string> {
  const evidence = new Set<string>();
  walk(observations, (value, key, _path, isKey) => {
    const figures = !isKey && !isIdKey(key);
    if (typeof value === 'number' && Number.isFinite(value)) {
      if (!figures) return;
      evidence.add(numberKey(value));
      if (CENTS_KEY.test(key)) evidence.add(numberKey(value / 100));
    } else if (typeof value === 'string') {
      addText(evidence, value, figures);
    } else if (typeof value === 'boolean') {
      evidence.add(`w:${String(value)}`);
    }
  });
  return evidence;
}

/** The plan names the observations know: every word under a key such as plan, tier or sku. */
export function planVocabulary(observations: readonly Observation[]): Set<string> {
  const words = new Set<string>();
  walk(observations, (value, key, path) => {
    if (typeof value === 'string' && path.some((k) => PLAN_KEY.test(k))) {
      for (const w of wordsOf(normaliseText(value))) if (/^\p{L}+$/u.test(w)) words.add(w);
    }
  });
  return words;
}

/**
 * Every value and every object key of the observations' data, with the keys above it (a key's
 * words are evidence, its numbers are not: {"42": ...}); the validator's own observations are skipped.
 */
function walk(
  observations: readonly Observation[],
  visit: (value: unknown, key: string, path: readonly string[], isKey: boolean) => void,
): void {
  const stack: Array<{ value: unknown; path: string[] }> = observations
    .filter((o) => o.source !== VALIDATOR_SOURCE)
    .map((o) => ({ value: o.data, path: [] }));
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    const key = path[path.length - 1] ?? '';
    if (Array.isArray(value)) {
      for (const child of value as unknown[]) stack.push({ value: child, path });
    } else if (typeof value === 'object' && value !== null) {
      for (const [k, child] of Object.entries(value)) {
        visit(k, k, path, true);
        stack.push({ value: child, path: [...path, k] });
      }
    } else {
      visit(value, key, path, false);
    }
  }
}

const NUMBER_RE = new RegExp(DIGIT_NUMBER, 'gu');
const WORDS_RE = new RegExp(WORD_NUMBER, 'giu');
const UNIT_AFTER = new RegExp(
  String.raw`^(?:k|m|mn|bn|x|days?|weeks?|months?|years?|hours?|pct|percent|${CURRENCY_CODES})(?![\p{L}])`,
  'iu',
);
const CODE_BEFORE = new RegExp(String.raw`(?:^|[^\p{L}])(?:${CURRENCY_CODES}|[a-z]{1,3}\$)$`, 'iu');
const SCALED = /^ ?(k|thousand|m|mn|million|bn|billion)(?![\p{L}\p{N}])/iu;
const SCALE_OF: Record<string, number> = {
  k: 1e3,
  thousand: 1e3,
  m: 1e6,
  mn: 1e6,
  million: 1e6,
  bn: 1e9,
  billion: 1e9,
};

/** A number that is part of an identifier, a time or an ordinal: rf_59, a59f, wf-59, 10:59, #59, 59b, 59th. */
function glued(text: string, start: number, end: number): boolean {
  const before = text.slice(Math.max(0, start - 8), start);
  const after = text.slice(end, end + 16);
  if (/[\p{L}_]$/u.test(before) && !CODE_BEFORE.test(before)) return true;
  if (/[\p{L}\p{N}_][:/@.]$|\p{L}-$|#$/u.test(before)) return true;
  if (/^[\p{L}_]/u.test(after) && !UNIT_AFTER.test(after)) return true;
  if (/^-\p{L}/u.test(after) && !UNIT_AFTER.test(after.slice(1))) return true;
  return /^[:/@][\p{L}\p{N}]/u.test(after);
}

function addText(evidence: Set<string>, raw: string, figures = true): void {
  const text = normaliseText(raw);
  for (const word of wordsOf(text)) evidence.add(`w:${word}`);
  if (!figures) return;
  const dates = datesIn(text);
  for (const date of dates) for (const key of date.keys) evidence.add(key);
  const inDate = (s: number, e: number) => dates.some((d) => s < d.end && e > d.start);
  for (const m of text.matchAll(NUMBER_RE)) {
    const start = m.index;
    const end = start + m[0].length;
    if (inDate(start, end) || glued(text, start, end)) continue;
    const scale = SCALED.exec(text.slice(end, end + 12));
    for (const n of readDigits(m[0], true)) {
      evidence.add(numberKey(n));
      if (scale) evidence.add(numberKey(n * SCALE_OF[scale[1]!.toLowerCase()]!));
      if (/^ ?(?:cents?(?![\p{L}])|¢)/u.test(text.slice(end, end + 8))) evidence.add(numberKey(n / 100));
    }
  }
  for (const m of text.matchAll(WORDS_RE)) {
    const n = readNumber(m[0]);
    if (n !== undefined) evidence.add(numberKey(n));
  }
}

export interface FinalCheck {
  claims: Claim[];
  unsupported: ClaimText[];
}

/** The answer's claims, and those no observation of the run supports (at most MAX_REPORTED_CLAIMS). */
export function checkFinalAnswer(answer: string, observations: readonly Observation[]): FinalCheck {
  const claims = extractClaims(answer, planVocabulary(observations));
  if (claims.length === 0) return { claims, unsupported: [] };
  const evidence = collectEvidence(observations);
  const seen = new Set<string>();
  const distinct: ClaimText[] = [];
  for (const { kind, text, alternatives } of claims) {
    if (alternatives.some((keys) => keys.every((key) => evidence.has(key))) || seen.has(`${kind} ${text}`)) continue;
    seen.add(`${kind} ${text}`);
    distinct.push({ kind, text });
  }
  return { claims, unsupported: distinct.slice(0, MAX_REPORTED_CLAIMS) };
}

export const VALIDATOR_NOTICE =
  'Your final answer was not accepted: it states figures that appear in no observation of this run. ' +
  'Check them with a tool, answer without them, or escalate. A second unsupported answer ends the run.';

/** What the model sees after an unsupported answer: the runtime's own observation, naming the claims. */
export function validatorObservation(unsupported: readonly ClaimText[]): Observation {
  const data = { verdict: 'unsupported_answer', notice: VALIDATOR_NOTICE, unsupported_claims: unsupported };
  return {
    tool: VALIDATOR_TOOL,
    ok: false,
    data,
    source: VALIDATOR_SOURCE,
    bytes: utf8Length(stableJson(data)),
    truncated: false,
  };
}
