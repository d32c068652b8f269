// The final validator against generated phrasings (fast-check): amounts, percentages, day counts,
// dates and plan names written the ways people write them (symbol or code before or after, any
// spacing, markup, full-width and other scripts' digits, decimal commas and thousands separators
// of five conventions, number words) are read as the figure they state. The oracle is the figure the generator chose:
// every false one is refused, every true one accepted, and the answer states exactly one claim.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import { checkFinalAnswer } from '../../common/validator/final-validator';
import type { Observation } from '../../common/tools/observation';
import { stableJson } from '../../common/tools/hash';

const RUNS = 1500;

const observation = (data: unknown): Observation => ({
  tool: 'get_user_billing',
  ok: true,
  data,
  source: 'billing-service',
  bytes: stableJson(data).length,
  truncated: false,
});

/** One claim, and whether it was refused. */
function verdict(answer: string, data: unknown): { claims: number; refused: boolean } {
  const check = checkFinalAnswer(answer, [observation(data)]);
  return { claims: check.claims.length, refused: check.unsupported.length > 0 };
}

function expectVerdict(answer: string, data: unknown, truth: boolean): void {
  const { claims, refused } = verdict(answer, data);
  assert.equal(claims, 1, `one claim in ${JSON.stringify(answer)}`);
  assert.equal(refused, !truth, `${truth ? 'true' : 'false'} claim ${JSON.stringify(answer)} vs ${stableJson(data)}`);
}

// --- surface forms ---

const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

interface WordStyle {
  hyphen: boolean;
  and: boolean;
  capital: boolean;
}

function below100(n: number, s: WordStyle): string {
  if (n < 20) return ONES[n]!;
  return TENS[Math.floor(n / 10)]! + (n % 10 ? (s.hyphen ? '-' : ' ') + ONES[n % 10]! : '');
}

function below1000(n: number, s: WordStyle): string {
  const h = Math.floor(n / 100);
  const r = n % 100;
  if (h === 0) return below100(r, s);
  return `${ONES[h]} hundred` + (r ? (s.and ? ' and ' : ' ') + below100(r, s) : '');
}

/** English words for 0 to 999,999: "one thousand two hundred and five". */
function toWords(n: number, s: WordStyle): string {
  const th = Math.floor(n / 1000);
  const r = n % 1000;
  const words =
    th === 0
      ? below1000(r, s)
      : `${below1000(th, s)} thousand` + (r ? (r < 100 && s.and ? ' and ' : ' ') + below1000(r, s) : '');
  return s.capital ? words[0]!.toUpperCase() + words.slice(1) : words;
}

const wordStyle = fc.record({ hyphen: fc.boolean(), and: fc.boolean(), capital: fc.boolean() });

/** The zero of a script's digits: ASCII, full-width, Arabic-Indic, Persian, Devanagari, Bengali, Thai, mathematical bold. */
const digitScript = fc.constantFrom(0x30, 0x30, 0xff10, 0x660, 0x6f0, 0x966, 0x9e6, 0xe50, 0x1d7ce);

function inScript(text: string, zero: number): string {
  const out = text.replace(/\d/g, (d) => String.fromCodePoint(zero + Number(d)));
  return zero === 0xff10 ? out.replace(/,/g, '，').replace(/\./g, '．') : out;
}

const space = fc.constantFrom(' ', ' ', '  ', '\u00a0', '\u202f', '\t', '\n ');
const optionalSpace = fc.oneof(fc.constant(''), space);
const markup = fc.constantFrom('', '', '**', '*', '_', '__', '`', '***', '<b>', '<strong>', '~~');

function marked(text: string, mark: string): string {
  if (mark.startsWith('<')) return `${mark}${text}</${mark.slice(1)}`;
  return `${mark}${text}${mark}`;
}

/** Markup glued to a code or a word would make one word of them ("USD_59_" is no emphasis). */
const safeMark = (mark: string, sep: string) => (sep === '' && mark.startsWith('_') ? '**' : mark);

/** Digits with a thousands separator and a decimal mark: en 1,234.50; de 1.234,50; fr 1 234,50; ch 1'234.50; in 1,23,456.50. */
function digits(cents: number, style: string, showCents: boolean): string {
  const int = String(Math.floor(cents / 100));
  const frac = String(cents % 100).padStart(2, '0');
  const [group, point] =
    style === 'en' || style === 'in'
      ? [',', '.']
      : style === 'de'
        ? ['.', ',']
        : style === 'fr'
          ? ['\u202f', ',']
          : style === 'ch'
            ? ["'", '.']
            : style === 'comma'
              ? ['', ',']
              : ['', '.'];
  const grouped =
    style === 'in' && int.length > 3
      ? `${int.slice(0, -3).replace(/\B(?=(\d{2})+(?!\d))/g, ',')},${int.slice(-3)}`
      : int.replace(/\B(?=(\d{3})+(?!\d))/g, group);
  return showCents || cents % 100 !== 0 ? `${grouped}${point}${frac}` : grouped;
}

const numberStyle = fc.constantFrom('plain', 'en', 'de', 'fr', 'ch', 'in', 'comma');

const sentences = [
  (x: string) => `Refund of ${x} issued.`,
  (x: string) => x,
  (x: string) => `Yes: you will get ${x} back, as the policy says.`,
  (x: string) => `The answer (${x}) stands!`,
  (x: string) => `Total:${x}`,
];
const sentence = fc.constantFrom(...sentences);

// --- amounts ---

const cents = fc.oneof(
  fc.integer({ min: 0, max: 99_999 }),
  fc.integer({ min: 0, max: 2_000 }).map((d) => d * 100),
  fc.integer({ min: 0, max: 500_000_000 }),
);

const PREFIXES = ['$', 'US$', 'USD', 'usd', '€', 'EUR', '£', 'GBP', '¥', 'CHF', '₹'];
const SUFFIXES = ['$', '€', 'USD', 'EUR', 'gbp', '£', '(USD)'];
const WORDS_AFTER = [
  'dollars',
  'US dollars',
  'United States dollars',
  'euros',
  'bucks',
  'pounds',
  'Swiss francs',
  'Dollars',
];

const amountForm = fc.record({
  form: fc.constantFrom('prefix', 'suffix', 'word', 'words', 'cents', 'dollars-and-cents'),
  prefix: fc.constantFrom(...PREFIXES),
  suffix: fc.constantFrom(...SUFFIXES),
  word: fc.constantFrom(...WORDS_AFTER),
  sep: optionalSpace,
  /** After a sign or code: also "USD: 59", "USD-59". */
  prefixSep: fc.oneof(optionalSpace, fc.constantFrom(': ', ':', '-', ' - ')),
  /** A price's empty decimals: "59,-". */
  dashes: fc.boolean(),
  wordSep: space,
  style: numberStyle,
  showCents: fc.boolean(),
  script: digitScript,
  mark: markup,
  whole: fc.boolean(),
  words: wordStyle,
});

/** An amount of `value` cents in the form `f` describes (digits where words or cents cannot say it). */
function amountText(value: number, f: typeof amountForm extends fc.Arbitrary<infer T> ? T : never): string {
  const dollars = value / 100;
  const form =
    (f.form === 'words' && (value % 100 !== 0 || dollars >= 1_000_000)) ||
    (f.form === 'cents' && value >= 100) ||
    (f.form === 'dollars-and-cents' && (value < 100 || value % 100 === 0 || dollars >= 1_000_000))
      ? 'prefix'
      : f.form;
  const dashed = f.dashes && value % 100 === 0 && !f.showCents;
  const num =
    inScript(digits(value, f.style, f.showCents), f.script) + (dashed ? (f.style === 'de' ? ',-' : '.-') : '');
  const wholeMark = (s: string) => (f.whole ? marked(s, f.mark) : s);
  const numMark = (s: string, sep: string) => (f.whole ? s : marked(s, safeMark(f.mark, sep)));
  switch (form) {
    case 'prefix':
      return wholeMark(`${f.prefix}${f.prefixSep}${numMark(num, f.prefixSep)}`);
    case 'suffix':
      return wholeMark(`${numMark(num, f.sep)}${f.sep}${f.suffix}`);
    case 'word':
      return wholeMark(`${numMark(num, f.wordSep)}${f.wordSep}${f.word}`);
    case 'words':
      return wholeMark(`${toWords(dollars, f.words)}${f.wordSep}${f.word}`);
    case 'cents':
      return wholeMark(`${inScript(String(value), f.script)}${f.sep}${f.sep === '' ? '¢' : 'cents'}`);
    default:
      return wholeMark(`${toWords(Math.floor(dollars), f.words)} dollars and ${toWords(value % 100, f.words)} cents`);
  }
}

// --- percentages and day counts ---

const percentForm = fc.record({
  words: fc.boolean(),
  point: fc.constantFrom('.', ','),
  unit: fc.constantFrom('%', ' %', '％', ' percent', ' per cent', '-percent', ' pct', '-pc'),
  script: digitScript,
  mark: markup,
  ws: wordStyle,
});

function percentText(tenths: number, f: typeof percentForm extends fc.Arbitrary<infer T> ? T : never): string {
  const whole = tenths % 10 === 0;
  const n =
    f.words && whole
      ? toWords(tenths / 10, f.ws)
      : inScript(whole ? String(tenths / 10) : (tenths / 10).toFixed(1).replace('.', f.point), f.script);
  return `${marked(n, /^[ -]/.test(f.unit) ? f.mark : safeMark(f.mark, ''))}${f.unit}`;
}

const dayForm = fc.record({
  words: fc.boolean(),
  /** "fourteen (14) days". */
  restate: fc.boolean(),
  join: fc.constantFrom(' ', '-', '\u00a0', '  '),
  kind: fc.constantFrom('', 'business ', 'calendar ', 'working ', 'more ', 'additional ', 'consecutive ', 'business-'),
  plural: fc.boolean(),
  script: digitScript,
  mark: markup,
  ws: wordStyle,
});

function dayText(n: number, unit: 'day' | 'week', f: typeof dayForm extends fc.Arbitrary<infer T> ? T : never): string {
  const digits = inScript(String(n), f.script);
  const num = f.restate ? `${toWords(n, f.ws)} (${digits})` : f.words ? toWords(n, f.ws) : digits;
  const join = f.kind ? ' ' : f.join;
  const plural = f.plural && (f.kind ? !f.kind.endsWith('-') : join !== '-');
  return `${marked(num, f.mark)}${join}${f.kind}${unit}${plural ? 's' : ''}`;
}

// --- dates ---

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const ORDINALS = [
  '',
  'first',
  'second',
  'third',
  'fourth',
  'fifth',
  'sixth',
  'seventh',
  'eighth',
  'ninth',
  'tenth',
  'eleventh',
  'twelfth',
  'thirteenth',
  'fourteenth',
  'fifteenth',
  'sixteenth',
  'seventeenth',
  'eighteenth',
  'nineteenth',
  'twentieth',
];
const ordinalWord = (d: number) =>
  d <= 20 ? ORDINALS[d]! : d === 30 ? 'thirtieth' : `${d < 30 ? 'twenty' : 'thirty'}-${ORDINALS[d % 10]!}`;
const suffix = (d: number) =>
  d % 10 === 1 && d !== 11 ? 'st' : d % 10 === 2 && d !== 12 ? 'nd' : d % 10 === 3 && d !== 13 ? 'rd' : 'th';

interface Day {
  y: number;
  m: number;
  d: number;
}

const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();
const day = fc
  .record({
    y: fc.integer({ min: 2000, max: 2099 }),
    m: fc.integer({ min: 1, max: 12 }),
    d: fc.integer({ min: 1, max: 31 }),
  })
  .map(({ y, m, d }) => ({ y, m, d: Math.min(d, daysIn(y, m)) }));
const pad = (n: number) => String(n).padStart(2, '0');
const iso = (t: Day) => `${t.y}-${pad(t.m)}-${pad(t.d)}`;

/** Near misses: the next day, another year, month and day swapped. */
function nearDate(t: Day, how: number): Day {
  if (how === 0) return t;
  if (how === 1) {
    const next = new Date(Date.UTC(t.y, t.m - 1, t.d + 1));
    return { y: next.getUTCFullYear(), m: next.getUTCMonth() + 1, d: next.getUTCDate() };
  }
  if (how === 2) return { ...t, y: t.y === 2099 ? 2000 : t.y + 1, d: Math.min(t.d, daysIn(t.y + 1, t.m)) };
  if (how === 3 && t.d <= 12) return { y: t.y, m: t.d, d: Math.min(t.m, daysIn(t.y, t.d)) };
  return t;
}

type DateForm =
  | 'iso'
  | 'isotime'
  | 'mdy'
  | 'dmy'
  | 'md'
  | 'dm'
  | 'ordinal-words'
  | 'slash'
  | 'ymd-slash'
  | 'compact'
  | 'dmy-hyphen'
  | 'mdy-hyphen';

function dateText(v: Day, form: DateForm, o: { abbr: boolean; lower: boolean; upper: boolean; suffix: boolean }) {
  const full = MONTHS[v.m - 1]!;
  // Lower-case "may" and "march" are verbs, and short forms are months only capitalised.
  const name0 = o.abbr ? full.slice(0, v.m === 9 ? 4 : 3) + (o.lower ? '' : '.') : full;
  const ambiguous = o.abbr || v.m === 3 || v.m === 5;
  const name = o.upper ? name0.toUpperCase() : o.lower && !ambiguous ? name0.toLowerCase() : name0;
  const d = `${v.d}${o.suffix ? suffix(v.d) : ''}`;
  switch (form) {
    case 'iso':
      return iso(v);
    case 'isotime':
      return `${iso(v)}T10:59:00Z`;
    case 'mdy':
      return `${name} ${d}, ${v.y}`;
    case 'dmy':
      return `${d} ${o.suffix ? 'of ' : ''}${name} ${v.y}`;
    case 'md':
      return `${name} ${d}`;
    case 'dm':
      return `${d} ${name}`;
    case 'ordinal-words':
      return `the ${ordinalWord(v.d)} of ${name}, ${v.y}`;
    case 'slash':
      return `${pad(v.d)}/${pad(v.m)}/${v.y}`;
    case 'compact':
      return `${v.y}${pad(v.m)}${pad(v.d)}`;
    case 'dmy-hyphen':
      return `${v.d}-${name}-${v.y}`;
    case 'mdy-hyphen':
      return `${name}-${v.d}-${v.y}`;
    default:
      return `${v.y}/${pad(v.m)}/${pad(v.d)}`;
  }
}

/** The oracle: the date the text states, as its form reads (year-less forms match month and day). */
function dateTrue(v: Day, t: Day, form: DateForm): boolean {
  const same = (a: Day) => a.y === t.y && a.m === t.m && a.d === t.d;
  if (form === 'md' || form === 'dm') return v.m === t.m && v.d === t.d;
  if (form === 'slash') return same(v) || (v.m <= 31 && v.d <= 12 && same({ y: v.y, m: v.d, d: v.m }));
  return same(v);
}

const EVIDENCE_DATE = [
  (t: Day) => ({ renews_on: iso(t) }),
  (t: Day) => ({ renewed_at: `${iso(t)}T08:15:00.000Z` }),
  (t: Day) => ({ note: `Renews on ${MONTHS[t.m - 1]} ${t.d}, ${t.y}.` }),
  (t: Day) => [{ id: 'billing-v2', snippet: `Next charge: ${t.d} ${MONTHS[t.m - 1]} ${t.y}` }],
];

// --- the properties ---

const dateForm = fc.record({
  form: fc.constantFrom<DateForm>(
    'iso',
    'isotime',
    'mdy',
    'dmy',
    'md',
    'dm',
    'ordinal-words',
    'slash',
    'ymd-slash',
    'compact',
    'dmy-hyphen',
    'mdy-hyphen',
  ),
  abbr: fc.boolean(),
  lower: fc.boolean(),
  upper: fc.boolean(),
  suffix: fc.boolean(),
  script: digitScript,
  mark: markup,
});

/** Half the time the figure the data holds, else another one. */
const maybe = <T>(other: fc.Arbitrary<T>) => fc.oneof(fc.constant(undefined), other);
/** A near miss: a cent more or less, or the same. */
const nearMiss = fc.oneof(fc.constant(0), fc.integer({ min: -2, max: 2 }));

describe('generated phrasings: every false figure refused, every true one accepted', () => {
  it('amounts: symbols and codes before or after, spacing, markup, digits of any script, separators, words', () => {
    fc.assert(
      fc.property(cents, maybe(cents), nearMiss, amountForm, sentence, (t, other, nudge, f, say) => {
        const v = other ?? Math.max(0, t + nudge);
        expectVerdict(say(amountText(v, f)), { billing: { plan: 'pro_monthly', price_usd: t / 100 } }, v === t);
      }),
      { numRuns: RUNS },
    );
  });

  it('percentages: %, percent, per cent, decimal comma, words; a percentage may be a fraction in the data', () => {
    const tenths = fc.integer({ min: 0, max: 1000 });
    fc.assert(
      fc.property(tenths, maybe(tenths), fc.boolean(), percentForm, sentence, (t10, other, fraction, f, say) => {
        const v10 = other ?? t10;
        // The data holds t percent as 15 or as 0.15; a claim of v percent reads as v or v/100.
        const data = { fee_rate: fraction ? t10 / 1000 : t10 / 10 };
        const truth = fraction ? v10 === t10 || 100 * v10 === t10 : v10 === t10 || v10 === 100 * t10;
        expectVerdict(say(percentText(v10, f)), data, truth);
      }),
      { numRuns: RUNS },
    );
  });

  it('day counts: days and weeks in digits or words, business and calendar days, hyphenated', () => {
    const days = fc.integer({ min: 1, max: 400 });
    fc.assert(
      fc.property(days, maybe(days), fc.boolean(), dayForm, sentence, (t, other, weeks, f, say) => {
        const v = weeks ? Math.max(1, Math.round((other ?? t) / 7)) : (other ?? t);
        const truth = weeks ? v === t || 7 * v === t : v === t;
        expectVerdict(say(`within ${dayText(v, weeks ? 'week' : 'day', f)}`), { window_days: t }, truth);
      }),
      { numRuns: RUNS },
    );
  });

  it('dates: ISO, month names in either order, ordinals in digits and words, numeric dates either way round', () => {
    fc.assert(
      fc.property(
        day,
        fc.integer({ min: 0, max: 4 }),
        day,
        fc.constantFrom(...EVIDENCE_DATE),
        dateForm,
        (t, how, random, evidence, f) => {
          const v = how === 4 ? random : nearDate(t, how);
          const text = marked(inScript(dateText(v, f.form, f), f.script), f.mark);
          expectVerdict(`Your plan renews on ${text}.`, evidence(t), dateTrue(v, t, f.form));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('plans: a plan name the data or the usual vocabulary knows is a claim; generic words never are', () => {
    const names = ['Pro', 'Free', 'Basic', 'Enterprise', 'Premium', 'Gold', 'Starter', 'pro_monthly', 'Team'];
    fc.assert(
      fc.property(
        fc.constantFrom(...names),
        fc.constantFrom(...names),
        fc.constantFrom('plan', 'tier', 'subscription'),
        markup,
        (t, v, noun, mark) => {
          const data = { billing: { plan: t.toLowerCase(), price_usd: 49 } };
          const truth = v
            .toLowerCase()
            .split('_')
            .every((w) => t.toLowerCase().split('_').includes(w));
          expectVerdict(`You are on the ${marked(v, mark)} ${noun}.`, data, truth);
        },
      ),
      { numRuns: RUNS },
    );
    fc.assert(
      fc.property(
        fc.constantFrom('switch', 'change', 'cancel', 'upgrade', 'downgrade', 'compare', 'review', 'keep'),
        fc.constantFrom('cheaper', 'better', 'higher', 'lower', 'next', 'other', 'different', 'same'),
        fc.constantFrom('plan', 'plans', 'tier', 'tiers'),
        (verb, adjective, noun) => {
          const answer = `You may also ${verb} ${noun}, or pick a ${adjective} ${noun}. You may ${verb} your ${noun} later.`;
          const check = checkFinalAnswer(answer, [observation({ billing: { plan: 'pro_monthly' } })]);
          assert.deepEqual(check.claims, [], answer);
        },
      ),
      { numRuns: 200 },
    );
  });
});
