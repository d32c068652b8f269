// CPython 3.11's tokenizer, for the characters `calculate` lets through ("0123456789+-*/(). "): numbers,
// the operators + - * / ** // ( ) . and ..., and its three errors (unmatched ')', more than 200 nested
// parentheses, leading zeros in an int literal). An unclosed '(' is not an error yet: the end of the input
// then is a token that fails when the parser reads it.
import { RetailToolError } from '../errors';

export type TokenKind = 'NUMBER' | 'OP' | 'ENDMARKER' | 'EOF_IN_PARENS';

export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  /** The parenthesis depth after the token (as the parser records it). */
  readonly level: number;
}

const MAXLEVEL = 200;

export function syntaxError(message: string, line = 1): RetailToolError {
  return new RetailToolError(`${message} (<string>, line ${line})`, 'SyntaxError');
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** The whole token list, or the tokenizer's first error (which wins over any parser error). */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let level = 0;
  let i = 0;
  const n = source.length;
  const digitsFrom = (j: number): number => {
    while (isDigit(source[j])) j++;
    return j;
  };
  for (;;) {
    while (source[i] === ' ') i++;
    if (i >= n) {
      tokens.push({ kind: level > 0 ? 'EOF_IN_PARENS' : 'ENDMARKER', text: '', level });
      return tokens;
    }
    const c = source[i]!;
    const start = i;
    if (c === '.' && isDigit(source[i + 1])) {
      i = digitsFrom(i + 1);
      tokens.push({ kind: 'NUMBER', text: source.slice(start, i), level });
    } else if (c === '.') {
      i += source.startsWith('...', i) ? 3 : 1;
      tokens.push({ kind: 'OP', text: source.slice(start, i), level });
    } else if (isDigit(c)) {
      if (c === '0') {
        let j = i + 1;
        while (source[j] === '0') j++;
        const nonzero = isDigit(source[j]);
        j = digitsFrom(j);
        if (source[j] === '.') j = digitsFrom(j + 1);
        else if (nonzero) {
          throw syntaxError(
            'leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers',
          );
        }
        i = j;
      } else {
        i = digitsFrom(i);
        if (source[i] === '.') i = digitsFrom(i + 1);
      }
      tokens.push({ kind: 'NUMBER', text: source.slice(start, i), level });
    } else if ((c === '*' || c === '/') && source[i + 1] === c) {
      i += 2;
      tokens.push({ kind: 'OP', text: c + c, level });
    } else if (c === '(') {
      if (level >= MAXLEVEL) throw syntaxError('too many nested parentheses');
      level++;
      i++;
      tokens.push({ kind: 'OP', text: c, level });
    } else if (c === ')') {
      if (level === 0) throw syntaxError("unmatched ')'");
      level--;
      i++;
      tokens.push({ kind: 'OP', text: c, level });
    } else {
      i++;
      tokens.push({ kind: 'OP', text: c, level });
    }
  }
}
