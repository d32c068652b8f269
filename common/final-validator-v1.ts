// The final validator as runs recorded before the money-limits-v1 patch ran it: regexes over the
// raw text (ASCII digits, one space, symbols and codes before the number). Kept unchanged so that
// those runs replay to the verdicts they recorded; new runs use checkFinalAnswer
// (common/final-validator.ts).
import type { Observation } from './observation';
import { MAX_REPORTED_CLAIMS, VALIDATOR_SOURCE } from './final-validator';
import type { Claim, FinalCheck } from './final-validator';

const MAX_CLAIM_CHARS = 64;

const NUM = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = String.raw`(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`;

interface Pattern {
  kind: Claim['kind'];
  re: RegExp;
  keys: (m: RegExpExecArray) => string[][] | undefined;
}

// Order matters: a span claimed by an earlier pattern is not read again ("USD 14 May 2026" is an
// amount, then a date of May 2026 without a day: none).
const PATTERNS: Pattern[] = [
  {
    kind: 'amount',
    re: new RegExp(String.raw`(?:US\$|\$|€|£|¥)\s?(${NUM})|\b(?:USD|EUR|GBP|CAD|AUD|CHF|JPY)\s?(${NUM})`, 'gi'),
    keys: (m) => [[numberKey(m[1] ?? m[2]!)]],
  },
  {
    kind: 'amount',
    re: new RegExp(String.raw`\b(${NUM})\s?(?:USD|EUR|GBP|CAD|AUD|CHF|JPY|dollars?|euros?|pounds?)\b`, 'gi'),
    keys: (m) => [[numberKey(m[1]!)]],
  },
  {
    kind: 'date',
    re: /\b(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/g,
    keys: (m) => dateKeys(+m[1]!, +m[2]!, +m[3]!),
  },
  {
    kind: 'date',
    re: new RegExp(String.raw`\b${MONTH}\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b`, 'gi'),
    keys: (m) => dateKeys(m[3] ? +m[3] : undefined, monthOf(m[1]!), +m[2]!),
  },
  {
    kind: 'date',
    re: new RegExp(String.raw`\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?${MONTH}\.?(?:,?\s+(\d{4}))?\b`, 'gi'),
    keys: (m) => dateKeys(m[3] ? +m[3] : undefined, monthOf(m[2]!), +m[1]!),
  },
  {
    // 03/04/2026 is March 4 or 3 April: either reading supports it.
    kind: 'date',
    re: /\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b/g,
    keys: (m) => {
      const alternatives = [...(dateKeys(+m[3]!, +m[1]!, +m[2]!) ?? []), ...(dateKeys(+m[3]!, +m[2]!, +m[1]!) ?? [])];
      return alternatives.length > 0 ? alternatives : undefined;
    },
  },
  {
    // 15% is 15 or 0.15 in the data.
    kind: 'percent',
    re: new RegExp(String.raw`\b(${NUM})\s?(?:%|percent\b|per cent\b)`, 'gi'),
    keys: (m) => {
      const n = parseNumber(m[1]!);
      return [[`n:${canonical(n)}`], [`n:${canonical(n / 100)}`]];
    },
  },
  {
    // "14 days", "14-day", "2 business days", "2 weeks" (2 or 14 in the data).
    kind: 'day_count',
    re: new RegExp(String.raw`\b(${NUM})(?:\s|-)?(?:(?:business|calendar|working)\s)?(days?|weeks?)\b`, 'gi'),
    keys: (m) => {
      const n = parseNumber(m[1]!);
      return /^week/i.test(m[2]!) ? [[`n:${canonical(n)}`], [`n:${canonical(n * 7)}`]] : [[`n:${canonical(n)}`]];
    },
  },
  {
    kind: 'plan',
    re: /\b([A-Za-z][A-Za-z0-9_-]*)\s+(?:plan|tier)s?\b|\b(?:plan|tier)\s*[:=]\s*"?([A-Za-z][A-Za-z0-9_-]*)/gi,
    keys: (m) => {
      const words = wordsOf(m[1] ?? m[2]!);
      if (words.length === 0 || words.every((w) => NOT_PLAN_NAMES.has(w))) return undefined;
      return [words.map((w) => `w:${w}`)];
    },
  },
];

/** Words before "plan" that name no plan ("your plan", "the refund plan"). */
const NOT_PLAN_NAMES = new Set(
  (
    'a an the your their his her my our its this that these those current same any each every no which what ' +
    'new old paid other another different whole entire s user customer account billing payment refund not ' +
    'subscription pricing action their price annual yearly'
  ).split(' '),
);

/** Every figure the answer states, in order. */
export function extractClaimsV1(answer: string): Claim[] {
  const taken: Array<[number, number]> = [];
  const found: Array<{ at: number; claim: Claim }> = [];
  for (const pattern of PATTERNS) {
    pattern.re.lastIndex = 0;
    for (let m = pattern.re.exec(answer); m !== null; m = pattern.re.exec(answer)) {
      const start = m.index;
      const end = start + m[0].length;
      if (taken.some(([s, e]) => start < e && end > s)) continue;
      const alternatives = pattern.keys(m);
      if (!alternatives) continue;
      taken.push([start, end]);
      found.push({ at: start, claim: { kind: pattern.kind, text: bounded(m[0].trim()), alternatives } });
    }
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.claim);
}

/** The figures observations hold: numbers, dates and words, from values and keys alike. */
function collectEvidence(observations: readonly Observation[]): Set<string> {
  const evidence = new Set<string>();
  const stack: unknown[] = observations.filter((o) => o.source !== VALIDATOR_SOURCE).map((o) => o.data);
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'number' && Number.isFinite(value)) evidence.add(`n:${canonical(value)}`);
    else if (typeof value === 'string') addText(evidence, value);
    else if (typeof value === 'boolean') addText(evidence, String(value));
    else if (Array.isArray(value)) stack.push(...(value as unknown[]));
    else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        addText(evidence, key);
        stack.push(child);
      }
    }
  }
  return evidence;
}

function addText(evidence: Set<string>, text: string): void {
  for (const m of text.matchAll(new RegExp(NUM, 'g'))) evidence.add(numberKey(m[0]));
  for (const word of wordsOf(text)) evidence.add(`w:${word}`);
  for (const claim of extractClaimsV1(text)) {
    if (claim.kind !== 'date') continue;
    for (const alternative of claim.alternatives) for (const key of alternative) evidence.add(key);
  }
}

/** The answer's claims, and those no observation of the run supports (at most MAX_REPORTED_CLAIMS). */
export function checkFinalAnswerV1(answer: string, observations: readonly Observation[]): FinalCheck {
  const claims = extractClaimsV1(answer);
  if (claims.length === 0) return { claims, unsupported: [] };
  const evidence = collectEvidence(observations);
  const unsupported = claims
    .filter((c) => !c.alternatives.some((keys) => keys.every((key) => evidence.has(key))))
    .map(({ kind, text }) => ({ kind, text }));
  const distinct = unsupported.filter(
    (c, i) => unsupported.findIndex((d) => d.kind === c.kind && d.text === c.text) === i,
  );
  return { claims, unsupported: distinct.slice(0, MAX_REPORTED_CLAIMS) };
}

// --- normalisation ---

/** "$1,234.50", "1234.5" and 1234.5 are one figure: n:1234.5 (two decimals kept at most). */
function numberKey(text: string): string {
  return `n:${canonical(parseNumber(text))}`;
}

function parseNumber(text: string): number {
  return Number(text.replace(/,/g, ''));
}

function canonical(n: number): string {
  return String(Math.round(n * 100) / 100);
}

function monthOf(name: string): number {
  return MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1;
}

/** d:YYYY-MM-DD (with a year) and md:MM-DD; undefined for an impossible date. */
function dateKeys(year: number | undefined, month: number, day: number): string[][] | undefined {
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  const md = `${pad(month)}-${pad(day)}`;
  return year === undefined ? [[`md:${md}`]] : [[`d:${year}-${md}`, `md:${md}`]];
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** Lower-case words, split at anything not a letter or digit ("pro_monthly" is pro and monthly). */
function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

function bounded(text: string): string {
  const chars = Array.from(text.replace(/[\p{Cc}\p{Cs}]/gu, ' '));
  return chars.length > MAX_CLAIM_CHARS ? chars.slice(0, MAX_CLAIM_CHARS).join('') + '…' : chars.join('');
}
