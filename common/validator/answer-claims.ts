// Which figures a final answer states: amounts, dates, plans, percentages and day counts, read from
// the answer's normalised text (common/validator/answer-text.ts) with their context, each with the evidence
// keys that would support it. The final validator (common/validator/final-validator.ts) looks those keys up
// in the run's observations. Pure and deterministic: the workflow runs it.
import { normaliseText } from './answer-text';
import { DIGIT_NUMBER, ORDINAL_DAY, readDigits, readOrdinal, readWords, WORD_NUMBER } from './number-reading';

export type ClaimKind = 'amount' | 'date' | 'plan' | 'percent' | 'day_count';

export interface Claim {
  kind: ClaimKind;
  /** As the answer wrote it, normalised (bounded). */
  text: string;
  /** Evidence keys: the claim is supported when every key of at least one alternative is in the evidence. */
  alternatives: string[][];
}

const MAX_CLAIM_CHARS = 64;

// --- numbers and currencies ---

const NUMBER = `${DIGIT_NUMBER}|${WORD_NUMBER}`;
const SCALE = String.raw`(?:k|m|mn|mln|mil|mill|bn|hundred|thousand|million|billion)(?![\p{L}\p{N}])\.?`;
const SCALES: Record<string, number> = {
  k: 1e3,
  hundred: 1e2,
  thousand: 1e3,
  m: 1e6,
  mn: 1e6,
  mln: 1e6,
  mil: 1e6,
  mill: 1e6,
  million: 1e6,
  bn: 1e9,
  billion: 1e9,
};
/** ISO 4217 codes people write; none that is also an English word (ALL, TRY, CUP, TOP). */
export const CURRENCY_CODES =
  'USD|EUR|GBP|JPY|CNY|RMB|INR|CAD|AUD|NZD|CHF|SEK|NOK|DKK|PLN|CZK|HUF|BRL|MXN|ZAR|SGD|HKD|KRW|ILS|AED|SAR|THB|IDR|NGN|EGP|ARS|CLP|VND|TWD|UAH|RON|BGN|ISK';
const CODE = String.raw`(?:${CURRENCY_CODES})(?![\p{L}])`;
/** A currency sign (¢ is a hundredth, read apart) or a dollar with its country: US$, CA$, A$. */
const SYMBOL = String.raw`[a-z]{1,3}\$|(?!¢)\p{Sc}`;
const QUALIFIER = String.raw`(?:United States|U\.S\.A\.|USA|US|U\.S\.|American|Canadian|Australian|Aussie|New Zealand|Kiwi|Hong Kong|Singapore|Singaporean|New Taiwan|Taiwan|Swiss|British|Japanese|Chinese|Indian|Mexican|Brazilian|Chilean|Argentine|Colombian|Philippine|South African|Swedish|Norwegian|Danish|Polish|Czech|Hungarian|Turkish|Israeli) `;
const CURRENCY_WORD = String.raw`(?:dollars?|euros?|pounds?(?: sterling)?|sterling|yen|yuan|renminbi|francs?|rupees?|pesos?|reais|zlotys?|shekels?|lira|bucks?|quid|grand)(?![\p{L}])`;
const CENTS = String.raw`(?:cents?(?![\p{L}])|¢)`;
/** Cents after the whole units: "fifty dollars and ninety-nine cents", "49 dollars 99 cents". */
const MORE_CENTS = String.raw`(?:,? (?:and )?(?<cents>${NUMBER}) ?${CENTS})?`;
/** Between a number and its unit: nothing, a space or a hyphen ("14-day", and "**14**-day" is "14 -day"). */
const JOIN = String.raw`(?: ?- ?| )?`;
/** A restatement in parentheses: "fourteen (14) days", "USD 49 (forty-nine)"; both must be supported. */
const AGAIN = String.raw`(?: ?\((?<again>${NUMBER})\))?`;
/** The other end of a range or a pair: "USD 49-590", "$49 to $59", "USD 49/59", "$49 or 59"; both must be supported. */
const TO = String.raw`(?:(?: ?[-/] ?| to | or )(?:${SYMBOL}|${CODE})? ?(?<to>${DIGIT_NUMBER}))?`;
/** A figure in digits alone in parentheses, after its currency: "USD (59.00)". */
const PAREN_FIGURE = String.raw`[\d.,' ]{1,30}\)`;
/** A price's empty decimals: "59,-", "59.--". */
const DASHES = String.raw`(?:[.,]-{1,2}(?!-))?`;
/** Not inside a word or a number. */
const START = String.raw`(?<![\p{L}\p{N}.,'])`;

/** A number as the answer wrote it: digits (thousands separators, decimal comma) or words. */
export function readNumber(raw: string): number | undefined {
  const value = /^\.?\d/.test(raw) ? readDigits(raw)[0] : readWords(raw);
  return value !== undefined && Number.isFinite(value) ? value : undefined;
}

/** n:<value>, one spelling per number ("49", "49.00" and "49,00" are n:49). */
export function numberKey(n: number): string {
  return `n:${String(Number(Math.abs(n).toFixed(6)))}`;
}

/** The number and its restatement, if any. */
function numbers(g: Record<string, string | undefined>): number[] | undefined {
  const out: number[] = [];
  for (const raw of [g.from, g.n, g.again, g.to]) {
    if (raw === undefined) continue;
    const n = readNumber(raw);
    if (n === undefined) return undefined;
    out.push(n);
  }
  return out;
}

/** One alternative per reading: the keys of every number (and restatement) read that way. */
function alternatives(g: Record<string, string | undefined>, ...readings: Array<(n: number) => number>) {
  const ns = numbers(g);
  if (!ns) return undefined;
  return readings.map((reading) => [...new Set(ns.map((n) => numberKey(reading(n))))]);
}

function amount(g: Record<string, string | undefined>, divisor = 1): string[][] | undefined {
  const scale = g.scale
    ? SCALES[g.scale.toLowerCase().replace(/\.$/, '')]!
    : g.word?.toLowerCase() === 'grand'
      ? 1e3
      : 1;
  const cents = g.cents ? readNumber(g.cents) : 0;
  if (cents === undefined) return undefined;
  return alternatives(g, (n) => (n * scale) / divisor + cents / 100);
}

// --- dates ---

export interface DateFact {
  year?: number;
  month: number;
  day?: number;
  /** The last day of a range in the same month. */
  until?: number;
}

const MONTH = String.raw`(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![\p{L}])\.?`;
const FULL_MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** Words that put a bare "7 May" in a date's place ("User 7 may not" is no date). */
const DATE_LEAD =
  /(?:^|[^\p{L}])(?:on|by|until|till|before|after|from|since|through|due|dated|effective|starting|ending|between|of|the|renews?|renewed|expires?|expired|paid|charged|refunded|billed|monday|tuesday|wednesday|thursday|friday|saturday|sunday)[ ,]*$/iu;

/**
 * The month a word names, when it is used as one: "may" and "march" are verbs and "jan", "dec" and
 * the other short forms are names or words unless capitalised ("May", "Mar").
 */
function monthOf(word: string): number | undefined {
  const name = word.replace(/\.$/, '');
  const lower = name.toLowerCase();
  const month = FULL_MONTHS.findIndex((m) => m.startsWith(lower.slice(0, 3))) + 1;
  if (month === 0) return undefined;
  const unambiguous = FULL_MONTHS.includes(lower) && lower !== 'may' && lower !== 'march';
  return unambiguous || /^\p{Lu}/u.test(name) ? month : undefined;
}

function dayOf(digits: string | undefined, words: string | undefined): number | undefined {
  return digits !== undefined ? Number(digits) : words !== undefined ? readOrdinal(words) : undefined;
}

function validDate(fact: DateFact): DateFact | undefined {
  const { year, month, day } = fact;
  if (month < 1 || month > 12) return undefined;
  if (day === undefined) return fact;
  if (day < 1 || day > DAYS_IN_MONTH[month - 1]!) return undefined;
  const leap = year === undefined || (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
  return month === 2 && day === 29 && !leap ? undefined : fact;
}

/** The day a date names, or both ends of a range of days (none when the range is not a valid one). */
function days(f: DateFact): DateFact[] {
  const { until, ...day } = f;
  if (until === undefined) return [day];
  const last = validDate({ ...day, day: until });
  return last && f.day !== undefined && until > f.day ? [day, last] : [];
}

const pad = (n: number) => (n < 10 ? `0${n}` : String(n));

/** What a date claims: the day (with its year, when written), or the month of a year. */
export function dateClaimKey(f: DateFact): string {
  if (f.day === undefined) return `ym:${f.year}-${pad(f.month)}`;
  return f.year === undefined ? `md:${pad(f.month)}-${pad(f.day)}` : `d:${f.year}-${pad(f.month)}-${pad(f.day)}`;
}

/** What a date in an observation supports: its day, its day without the year, its month. */
export function dateEvidenceKeys(f: DateFact): string[] {
  if (f.day === undefined) return [`ym:${f.year}-${pad(f.month)}`];
  const md = `md:${pad(f.month)}-${pad(f.day)}`;
  return f.year === undefined ? [md] : [`d:${f.year}-${md.slice(3)}`, md, `ym:${f.year}-${pad(f.month)}`];
}

interface DatePattern {
  re: RegExp;
  facts: (g: Record<string, string | undefined>, before: string) => Array<DateFact | undefined> | undefined;
}

const YEAR = String.raw`(?:(?:,? |-)(?<year>\d{4})(?!\d))?`;
/** "January, 16 2026": a comma after the month only before a day and a year (not in "of May, 10 May"). */
const COMMA_BEFORE_DAY = String.raw`, (?=\d{1,2}(?:st|nd|rd|th)?,? \d{4}(?!\d))`;
/** The last day of a range: "January 15-20, 2026"; both days must be supported. */
const UNTIL = String.raw`(?: ?- ?(?<until>\d{1,2})(?![\p{N}:]))?`;

/** Dates in digits: read before amounts, so that no part of one is read as a number. */
const DIGIT_DATES: DatePattern[] = [
  {
    re: new RegExp(
      String.raw`(?<![\p{N}.,/-])(?<year>\d{4})-(?<month>\d{1,2})-(?<day>\d{1,2})(?:(?:T| )\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?: ?(?:Z|UTC|GMT|[+-]\d{2}:?\d{2}))?)?(?!\p{N})`,
      'giu',
    ),
    facts: (g) => [{ year: +g.year!, month: +g.month!, day: +g.day! }],
  },
  {
    // 20260116: a year from 1900 to 2099, a month and a day, never a price ("$20260116").
    re: /(?<![\p{N}\p{Sc}.,/-])(?<year>(?:19|20)\d{2})(?<month>0[1-9]|1[0-2])(?<day>0[1-9]|[12]\d|3[01])(?!\p{N}|[.,]\p{N})/gu,
    facts: (g) => [{ year: +g.year!, month: +g.month!, day: +g.day! }],
  },
  {
    re: /(?<![\p{N}.,/-])(?<year>\d{4})[/.](?<month>\d{1,2})[/.](?<day>\d{1,2})(?!\p{N}|[.,]\p{N})/gu,
    facts: (g) => [{ year: +g.year!, month: +g.month!, day: +g.day! }],
  },
  {
    // 03/04/2026 is March 4 or 3 April: either reading supports it.
    re: /(?<![\p{N}.,/-])(?<a>\d{1,2})(?<sep>[/.-])(?<b>\d{1,2})\k<sep>(?<year>\d{4})(?!\p{N})/gu,
    facts: (g) => [
      { year: +g.year!, month: +g.a!, day: +g.b! },
      { year: +g.year!, month: +g.b!, day: +g.a! },
    ],
  },
];

/** Dates with a month's name: read after amounts ("USD 14 May 2026" is an amount, then May 2026). */
const WORD_DATES: DatePattern[] = [
  {
    re: new RegExp(
      String.raw`(?<![\p{L}])(?<month>${MONTH})(?: |-|${COMMA_BEFORE_DAY})(?:the )?(?:(?<digits>\d{1,2})(?:st|nd|rd|th)?|(?<words>${ORDINAL_DAY}))(?![\p{L}\p{N}])${UNTIL}${YEAR}`,
      'giu',
    ),
    facts: (g) => {
      const month = monthOf(g.month!);
      return month === undefined
        ? undefined
        : [
            {
              year: g.year ? +g.year : undefined,
              month,
              day: dayOf(g.digits, g.words),
              until: dayOf(g.until, undefined),
            },
          ];
    },
  },
  {
    re: new RegExp(
      String.raw`(?<![\p{L}\p{N}.,])(?:(?<digits>\d{1,2})(?<suffix>st|nd|rd|th)?|(?<words>${ORDINAL_DAY}))(?: (?<of>of )?|-)(?<month>${MONTH})${YEAR}`,
      'giu',
    ),
    facts: (g, before) => {
      const month = monthOf(g.month!);
      if (month === undefined || (g.words && !g.of)) return undefined;
      // "7 May" with no year, suffix or "of": a date only where a date is expected ("on 7 May").
      const marked = g.year || g.suffix || g.words || g.of || DATE_LEAD.test(before);
      if (g.month!.toLowerCase().startsWith('may') && !marked) return undefined;
      return [{ year: g.year ? +g.year : undefined, month, day: dayOf(g.digits, g.words) }];
    },
  },
  {
    re: new RegExp(String.raw`(?<![\p{L}])(?<month>${MONTH}),? (?<year>\d{4})(?!\p{N})`, 'giu'),
    facts: (g) => {
      const month = monthOf(g.month!);
      return month === undefined ? undefined : [{ year: +g.year!, month }];
    },
  },
];

// --- plans ---

/** Words that name plans in the wild; a plan an observation names is known too. */
const PLAN_WORDS = new Set(
  (
    'free basic starter standard plus pro premium business enterprise team teams family student personal ' +
    'professional ultimate unlimited lite essential essentials advanced growth startup developer hobby gold ' +
    'silver bronze platinum diamond trial max mini individual duo corporate elite deluxe'
  ).split(' '),
);
/** Billing periods: part of a plan's name ("Pro monthly plan"), never one alone ("an annual plan"). */
const PERIOD_WORDS = new Set('monthly annual annually yearly quarterly weekly'.split(' '));
/** Words before "plan" that name no plan ("your plan", "the refund plan", "switch plans"). */
const NOT_PLAN_NAMES = new Set(
  (
    'a an the your their his her my our its this that these those current same any each every no which what ' +
    'new old paid other another different whole entire s user customer account billing payment refund not ' +
    'subscription pricing action price payment installment instalment repayment data meal care ' +
    'switch change cancel upgrade downgrade cheaper cheapest expensive higher lower better best more less next ' +
    'previous same right wrong suitable available'
  ).split(' '),
);
const PLAN_NOUN = /(?<![\p{L}\p{N}_])(?:plan|tier|subscription|membership)s?(?![\p{L}\p{N}_])/giu;
/** The word before a plan noun: "Pro plan", "Premium-tier", the "Premium" plan (quotes kept in the span). */
const TOKEN_BEFORE = /(?<![\p{L}\p{N}_'-])["“”«»]?([\p{L}\p{N}](?:[\p{L}\p{N}_']|-(?=[\p{L}\p{N}]))*)["“”«»]?[ -]$/u;

function isPlanToken(token: string, before: string | undefined, vocabulary: ReadonlySet<string>): boolean {
  const lower = token.toLowerCase().replace(/'s?$/, '');
  if (NOT_PLAN_NAMES.has(lower) || NOT_PLAN_NAMES.has(lower.replace(/s$/, ''))) return false;
  // An identifier: pro_monthly, gold2.
  if (/\p{L}_|_\p{L}/u.test(lower) || /^\p{L}+\d+$/u.test(lower)) return true;
  const known = (w: string) => PLAN_WORDS.has(w) || PERIOD_WORDS.has(w) || vocabulary.has(w);
  if (lower.split('-').every(known)) return true;
  // A proper name mid-sentence before "plan" or "tier": "the Zephyr plan" (not "Switch Plans", not a
  // sentence's first word, not "your Netflix subscription").
  return /^\p{Lu}\p{Ll}+$/u.test(token) && before !== undefined && /^\p{Ll}+$/u.test(before);
}

/** The plan named right before "plan" / "tier" / "subscription": up to three plan words. */
function planBefore(text: string, at: number, noun: string, vocabulary: ReadonlySet<string>) {
  const tokens: Array<{ token: string; start: number }> = [];
  let prefix = text.slice(Math.max(0, at - 200), at);
  const offset = Math.max(0, at - 200);
  for (let i = 0; i < 4; i++) {
    const m = TOKEN_BEFORE.exec(prefix);
    if (!m) break;
    tokens.unshift({ token: m[1]!, start: offset + m.index });
    prefix = prefix.slice(0, m.index);
  }
  const run: typeof tokens = [];
  for (let i = tokens.length - 1; i >= 0 && run.length < 3; i--) {
    const before = /^(?:plan|tier)s?$/i.test(noun) ? tokens[i - 1]?.token : undefined;
    if (!isPlanToken(tokens[i]!.token, before, vocabulary)) break;
    run.unshift(tokens[i]!);
  }
  const words = run.flatMap((t) => wordsOf(t.token));
  if (words.length === 0 || words.every((w) => PERIOD_WORDS.has(w))) return undefined;
  return { start: run[0]!.start, alternatives: [words.map((w) => `w:${w}`)] };
}

/** Lower-case words, split at anything not a letter or digit ("pro_monthly" is pro and monthly). */
export function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

// --- the patterns, in order: a span read by an earlier one is not read again ---

interface Read {
  alternatives: string[][];
  /** Where the claim starts, when not where the match does. */
  start?: number;
}

interface Pattern {
  kind: ClaimKind;
  re: RegExp;
  read: (m: RegExpExecArray, text: string, vocabulary: ReadonlySet<string>) => Read | undefined;
}

function datePattern(p: DatePattern): Pattern {
  return {
    kind: 'date',
    re: p.re,
    read: (m, text) => {
      const facts = p.facts(m.groups ?? {}, text.slice(Math.max(0, m.index - 40), m.index));
      const valid = (facts ?? []).map((f) => f && validDate(f)).filter((f) => f !== undefined);
      if (valid.length === 0) return undefined;
      const keys = valid.map((f) => days(f).map(dateClaimKey));
      return keys.every((k) => k.length > 0) ? { alternatives: keys } : undefined;
    },
  };
}

const re = (source: string) => new RegExp(source, 'giu');
const wrap = (alternatives: string[][] | undefined): Read | undefined => (alternatives ? { alternatives } : undefined);

const PATTERNS: Pattern[] = [
  ...DIGIT_DATES.map(datePattern),
  {
    // $49, USD 49.00, US$ 1.2k, € fifty, $3 hundred, USD 49-590; a sign between numbers is the
    // later one's ("2 $59 charges" is $59).
    kind: 'amount',
    re: re(
      String.raw`(?<![\p{L}\p{N}])(?:${SYMBOL}|${CODE})(?: ?[:=-] ?| | ?\((?=${PAREN_FIGURE}))?(?<n>${NUMBER})${DASHES}${AGAIN}(?: ?(?<scale>${SCALE}))?${TO}${MORE_CENTS}`,
    ),
    read: (m) => wrap(amount(m.groups!)),
  },
  {
    // 49 USD, 59 €, 59$, 59 US dollars, fifty-nine dollars and ninety-nine cents, 59 bucks, 2 grand.
    kind: 'amount',
    re: re(
      String.raw`${START}(?<n>${NUMBER})${DASHES}${AGAIN}(?: ?(?<scale>${SCALE}))?${JOIN}(?:\((?:${SYMBOL}|${CODE})\)|(?:${SYMBOL}|${CODE})(?! ?[:=-]? ?\d)|(?:${QUALIFIER})?(?<word>${CURRENCY_WORD}))${MORE_CENTS}`,
    ),
    read: (m) => wrap(amount(m.groups!)),
  },
  {
    kind: 'amount',
    re: re(String.raw`${START}(?<n>${NUMBER})${AGAIN}${JOIN}${CENTS}`),
    read: (m) => wrap(amount(m.groups!, 100)),
  },
  ...WORD_DATES.map(datePattern),
  {
    // 15% is 15 or 0.15 in the data; "20-pc" and "%20" too.
    kind: 'percent',
    re: re(
      String.raw`${START}(?:(?<n>${NUMBER})${AGAIN}${JOIN}(?:%|(?:percent|per cent|per-cent|pct|pc|percentage points?)(?![\p{L}]))|(?<![\p{L}\p{N}])% ?(?<m>${DIGIT_NUMBER}))`,
    ),
    read: (m) =>
      wrap(
        alternatives(
          m.groups!.m === undefined ? m.groups! : { n: m.groups!.m },
          (n) => n,
          (n) => n / 100,
        ),
      ),
  },
  {
    // "14 days", "14-day", "2 business days", "30 more days", "30 business-days", "3 to 5 days" (both), "fourteen days", "2 weeks" (2 or 14 in the data).
    kind: 'day_count',
    re: re(
      String.raw`${START}(?:(?<from>${DIGIT_NUMBER})(?: ?- ?| to ))?(?<n>${NUMBER})${AGAIN}${JOIN}(?:(?:business|calendar|working|banking|bank|school|full|more|additional|extra|further|consecutive|straight|remaining)[ -])?(?<unit>days?|weeks?|fortnights?)(?![\p{L}])`,
    ),
    read: (m) => {
      const unit = m.groups!.unit!.toLowerCase();
      const days = unit.startsWith('week') ? 7 : unit.startsWith('fortnight') ? 14 : 1;
      return wrap(
        days === 1
          ? alternatives(m.groups!, (n) => n)
          : alternatives(
              m.groups!,
              (n) => n,
              (n) => n * days,
            ),
      );
    },
  },
  {
    kind: 'plan',
    re: /(?<![\p{L}\p{N}_])(?:plan|tier)(?: ?[:=] ?| (?:called|named) )"?(?<name>[\p{L}\p{N}][\p{L}\p{N}_-]*)/giu,
    read: (m) => {
      const words = wordsOf(m.groups!.name!);
      if (words.length === 0 || words.every((w) => NOT_PLAN_NAMES.has(w))) return undefined;
      return { alternatives: [words.map((w) => `w:${w}`)] };
    },
  },
  {
    kind: 'plan',
    re: PLAN_NOUN,
    read: (m, text, vocabulary) => planBefore(text, m.index, m[0], vocabulary),
  },
];

/**
 * Every figure the answer states, in order. `vocabulary`: the plan names the run's observations
 * know (lower-case words), besides the usual ones.
 */
export function extractClaims(answer: string, vocabulary: ReadonlySet<string> = new Set()): Claim[] {
  const text = normaliseText(answer);
  // One mark per character read: a claim checks its own span, not every claim before it.
  const taken = new Uint8Array(text.length);
  const free = (start: number, end: number) => taken.subarray(start, end).every((t) => t === 0);
  const found: Array<{ at: number; claim: Claim }> = [];
  for (const pattern of PATTERNS) {
    pattern.re.lastIndex = 0;
    for (let m = pattern.re.exec(text); m !== null; m = pattern.re.exec(text)) {
      const read = pattern.read(m, text, vocabulary);
      const start = read?.start ?? m.index;
      const end = m.index + m[0].length;
      if (!read || !free(start, end)) {
        // A later start may still hold a figure ("USD 14 May 2026": May 2026).
        pattern.re.lastIndex = m.index + 1;
        continue;
      }
      taken.fill(1, start, end);
      found.push({ at: start, claim: { kind: pattern.kind, text: bounded(text.slice(start, end).trim()), ...read } });
    }
  }
  return found
    .sort((a, b) => a.at - b.at)
    .map(({ claim: { kind, text, alternatives } }) => ({ kind, text, alternatives }));
}

/** The dates a text states, for the evidence: each with its span. */
export function datesIn(text: string): Array<{ start: number; end: number; keys: string[] }> {
  const out: Array<{ start: number; end: number; keys: string[] }> = [];
  for (const p of [...DIGIT_DATES, ...WORD_DATES]) {
    p.re.lastIndex = 0;
    for (let m = p.re.exec(text); m !== null; m = p.re.exec(text)) {
      const start = m.index;
      const end = start + m[0].length;
      const facts = (p.facts(m.groups ?? {}, text.slice(Math.max(0, start - 40), start)) ?? [])
        .map((f) => f && validDate(f))
        .filter((f) => f !== undefined);
      if (facts.length === 0 || out.some((d) => start < d.end && end > d.start)) {
        p.re.lastIndex = start + 1;
        continue;
      }
      out.push({ start, end, keys: facts.flatMap(days).flatMap(dateEvidenceKeys) });
    }
  }
  return out;
}

function bounded(text: string): string {
  const chars = Array.from(text.replace(/[\p{Cc}\p{Cs}]/gu, ' '));
  return chars.length > MAX_CLAIM_CHARS ? chars.slice(0, MAX_CLAIM_CHARS).join('') + '…' : chars.join('');
}
