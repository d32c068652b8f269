// How numbers are written in an answer, as regex sources and readers for the final validator's
// patterns (over normalised text: ASCII digits, single spaces). Digits with thousands separators
// ("1,234.50", "1.234,50", "1 234,50", "1'234.50", "1,20,000") or a decimal comma ("49,99"), and English number
// words up to the billions ("fifty-nine", "one thousand two hundred and five", "a hundred").

const GROUPED = String.raw`[1-9]\d{0,2}(?:(?:,\d{3})+|(?:\.\d{3})+|(?:'\d{3})+|(?: \d{3})+)(?:[.,]\d+)?`;
/** Lakh and crore: 1,20,000 and 12,34,56,789. */
const INDIAN = String.raw`[1-9]\d?(?:,\d{2})+,\d{3}(?:\.\d+)?`;
/** "49", "49,99", and ".99" with no leading zero (never after a letter: "v.5"). */
const PLAIN = String.raw`\d+(?:[.,]\d+)?|(?<![\p{L}])\.\d+`;

/**
 * A number in digits, never a piece of a longer one. Nor does one start at a group of three digits
 * after "digit space" ("1 111"): that group belongs to the number before it, and starting there
 * would rescan every later group once per group (quadratic on "1 111 111 ... 1111").
 */
export const DIGIT_NUMBER = String.raw`(?<![\d.,'])(?!(?<=\d )\d{3}(?!\d))(?:${INDIAN}|${GROUPED}|${PLAIN})(?!\d|[.,']\d)`;

const UNITS = [
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
const TENS = ['twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SCALES: Record<string, number> = { thousand: 1e3, million: 1e6, billion: 1e9 };
const WORD = [...UNITS, ...TENS, 'hundred', ...Object.keys(SCALES)].sort((a, b) => b.length - a.length).join('|');

/** Number words: at most twelve, joined by spaces, hyphens or "and" (read with readWords). */
export const WORD_NUMBER = String.raw`(?<![\p{L}\p{N}])(?:an? )?(?:${WORD})(?:(?: and | |-)(?:${WORD})){0,11}(?![\p{L}\p{N}])`;

const ORDINAL_UNITS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth'];
const ORDINAL_TEENS = [
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
];

/** A day of the month in words: "first" to "thirty-first". */
export const ORDINAL_DAY = String.raw`(?:(?:twenty|thirty)[- ]?)?(?:${ORDINAL_UNITS.join('|')})|${ORDINAL_TEENS.join('|')}|twentieth|thirtieth`;

/**
 * The value of digits. One separator before exactly three digits groups thousands ("1,234" and
 * "1.234" are 1234); otherwise the last separator is the decimal point ("49,99" is 49.99).
 * `lenient` (evidence) adds the other reading of "1.234" and "1,234".
 */
export function readDigits(raw: string, lenient = false): number[] {
  const s = raw.replace(/[ ']/g, '');
  const seps = s.replace(/\d/g, '');
  if (seps === '') return [Number(s)];
  const last = seps[seps.length - 1]!;
  const lastAt = s.lastIndexOf(last);
  const tail = s.slice(lastAt + 1);
  const groups = s.split(/[.,]/);
  const indian =
    last === ',' && groups.length > 2 && tail.length === 3 && groups.slice(1, -1).every((g) => g.length === 2);
  const allThousands = indian || (/^[1-9]\d{0,2}$/.test(groups[0]!) && groups.slice(1).every((g) => g.length === 3));
  const sameKind = !seps.includes(last === '.' ? ',' : '.');
  if (sameKind && allThousands) {
    const grouped = Number(s.replace(/[.,]/g, ''));
    return lenient && seps.length === 1 ? [grouped, Number(`${groups[0]}.${tail}`)] : [grouped];
  }
  return [Number(`${s.slice(0, lastAt).replace(/[.,]/g, '')}.${tail}`)];
}

/** The value of number words, from the longest tail that is a well-formed number ("two and three" is 3). */
export function readWords(raw: string): number | undefined {
  const tokens = raw.toLowerCase().split(/[\s-]+/);
  for (let i = 0; i < tokens.length; i++) {
    const value = wordsValue(tokens.slice(i));
    if (value !== undefined) return value;
  }
  return undefined;
}

type Last = 'none' | 'a' | 'unit' | 'teen' | 'tens' | 'hundred' | 'scale' | 'and';

function wordsValue(tokens: readonly string[]): number | undefined {
  let total = 0;
  let group = 0;
  let lastScale = Infinity;
  let last: Last = 'none';
  const openGroup = () => last === 'none' || last === 'hundred' || last === 'scale' || last === 'and';
  for (const token of tokens) {
    const unit = UNITS.indexOf(token);
    const tens = TENS.indexOf(token);
    if (token === 'and') {
      if (last !== 'hundred' && last !== 'scale') return undefined;
      last = 'and';
    } else if (token === 'a' || token === 'an') {
      if (last !== 'none') return undefined;
      last = 'a';
    } else if (token === 'hundred') {
      if (last === 'a') group = 1;
      else if (!(last === 'unit' || last === 'teen' || last === 'tens') || group < 1 || group >= 100) return undefined;
      group *= 100;
      last = 'hundred';
    } else if (SCALES[token] !== undefined) {
      const scale = SCALES[token]!;
      if (last === 'a') group = 1;
      else if (!(last === 'unit' || last === 'teen' || last === 'tens' || last === 'hundred') || group < 1) {
        return undefined;
      }
      if (scale >= lastScale) return undefined;
      total += group * scale;
      group = 0;
      lastScale = scale;
      last = 'scale';
    } else if (unit === 0) {
      if (tokens.length !== 1) return undefined;
      last = 'unit';
    } else if (unit > 0 && unit < 10) {
      if (!(openGroup() || last === 'tens')) return undefined;
      group += unit;
      last = 'unit';
    } else if (unit >= 10) {
      if (!openGroup()) return undefined;
      group += unit;
      last = 'teen';
    } else if (tens >= 0) {
      if (!openGroup()) return undefined;
      group += (tens + 2) * 10;
      last = 'tens';
    } else {
      return undefined;
    }
  }
  if (last === 'a' || last === 'and' || last === 'none') return undefined;
  return total + group;
}

/** The day an ordinal word names: "fifteenth" is 15, "twenty-first" 21. */
export function readOrdinal(raw: string): number | undefined {
  const tokens = raw.toLowerCase().split(/[\s-]+/);
  const base = (word: string): number | undefined => {
    const u = ORDINAL_UNITS.indexOf(word);
    if (u >= 0) return u + 1;
    const t = ORDINAL_TEENS.indexOf(word);
    if (t >= 0) return t + 10;
    return word === 'twentieth' ? 20 : word === 'thirtieth' ? 30 : undefined;
  };
  if (tokens.length === 1) return base(tokens[0]!);
  if (tokens.length !== 2) return undefined;
  const tens = tokens[0] === 'twenty' ? 20 : tokens[0] === 'thirty' ? 30 : undefined;
  const unit = ORDINAL_UNITS.indexOf(tokens[1]!);
  return tens !== undefined && unit >= 0 ? tens + unit + 1 : undefined;
}
