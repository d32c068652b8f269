// One spelling for the many ways people write the same figure, so that the final validator's
// patterns need to know only one: compatibility forms folded (NFKC: full-width ５９ and ＄, no-break
// and thin spaces), every decimal digit as its ASCII digit, invisible format characters dropped,
// markup (** _ ` ~, HTML tags, backslash escapes) as spaces, dashes as "-", curly apostrophes as
// "'", and every run of white space as one space. Pure: the workflow runs it.

const DECIMAL_DIGIT = /\p{Nd}/u;

/** A decimal digit's value in any script: Unicode keeps each script's digits 0 to 9 in one run of ten. */
function digitValue(codePoint: number): number {
  const known = DIGIT_VALUES.get(codePoint);
  if (known !== undefined) return known;
  let before = 0;
  while (before < 64 && codePoint - before > 0 && DECIMAL_DIGIT.test(String.fromCodePoint(codePoint - before - 1))) {
    before++;
  }
  DIGIT_VALUES.set(codePoint, before % 10);
  return before % 10;
}

/** Digit values found so far (a cache of a pure function: the same in every replay). */
const DIGIT_VALUES = new Map<number, number>();

export function normaliseText(text: string): string {
  return (
    text
      .normalize('NFKC')
      .replace(/\p{Nd}/gu, (d) => (d >= '0' && d <= '9' ? d : String(digitValue(d.codePointAt(0)!))))
      // Zero-width spaces, joiners, soft hyphens, direction marks: invisible, so never a separator.
      .replace(/\p{Cf}/gu, '')
      .replace(/[\u2010-\u2015\u2212\u2E3A\u2E3B\uFE58\uFE63]/g, '-')
      .replace(/[\u2018\u2019\u02BC\u2032]/g, "'")
      .replace(/<\/?[A-Za-z][A-Za-z0-9]{0,15}(?:\s[^<>]{0,200})?\/?>/g, ' ')
      .replace(/\\([!-/:-@[-`{-~])/g, '$1')
      .replace(/[*`~]/g, ' ')
      // An underscore inside a word belongs to it (pro_monthly); at a word's edge it is emphasis.
      .replace(/(?<![\p{L}\p{N}])_+|_+(?![\p{L}\p{N}])/gu, ' ')
      .replace(/\s+/g, ' ')
  );
}
