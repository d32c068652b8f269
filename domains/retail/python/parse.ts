// CPython 3.11's PEG parser (Grammar/python.gram), for the tokens `calculate` can produce, rule by rule:
// the same alternatives in the same order, the same memoized rules, and the same two passes (a second pass
// with the invalid_* rules on, for "Perhaps you forgot a comma?" and the starred-group errors), so that the
// same input gets the same SyntaxError. Reading the end of an input with an open '(' raises "'(' was never
// closed" at the moment a rule looks at it, as the C parser does.
//
// The chain disjunction > conjunction > inversion > comparison > bitwise_or > bitwise_xor > bitwise_and >
// shift_expr > sum has no operator of its own in this alphabet: it is one memoized rule (`chain`) here.
import { RetailToolError } from '../errors';
import type { Token } from './tokenize';
import { syntaxError } from './tokenize';

export type BinaryOp = '+' | '-' | '*' | '/' | '//' | '**';

export type Node =
  | { readonly type: 'int'; readonly value: bigint }
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'ellipsis' }
  | { readonly type: 'tuple' }
  | { readonly type: 'unary'; readonly op: '+' | '-'; readonly operand: Node }
  | { readonly type: 'binary'; readonly op: BinaryOp; readonly left: Node; readonly right: Node }
  | { readonly type: 'call'; readonly func: Node; readonly arg: CallArg | undefined };

export interface CallArg {
  readonly kind: 'positional' | 'star' | 'doublestar';
  readonly value: Node;
}

/** Python's sys.get_int_max_str_digits() default. */
export const INT_MAX_STR_DIGITS = 4300;
/** The C parser's MAXSTACK: deeper rule nesting is a MemoryError. */
const MAXSTACK = 6000;

type Memo = { end: number; value: unknown };

// Memoized rules (CPython memoizes these, and the left-recursive ones).
const EXPRESSION = 0;
const CHAIN = 1;
const SUM = 2;
const TERM = 3;
const FACTOR = 4;
const AWAIT_PRIMARY = 5;
const PRIMARY = 6;
const ARGUMENTS = 7;
const INVALID_NAMED_EXPRESSION = 8;
const MISS = Symbol('miss');

// Written without closures: one JavaScript frame per rule, so that 200 nested parentheses (the tokenizer's
// limit) fit in JavaScript's stack. An exception ends the whole parse, so nothing is restored on one.
class Parser {
  private pos = 0;
  private level = 0;
  private readonly memo = new Map<number, Memo>();

  constructor(
    private readonly tokens: readonly Token[],
    private invalid: boolean,
  ) {}

  // --- tokens -------------------------------------------------------------------------------------------

  /** The token at the current position; reading the end of an input with an open '(' is an error. */
  private peek(): Token {
    const token = this.tokens[this.pos]!;
    if (token.kind === 'EOF_IN_PARENS') throw syntaxError("'(' was never closed");
    return token;
  }

  private isOp(text: string): boolean {
    const token = this.peek();
    return token.kind === 'OP' && token.text === text;
  }

  private expect(text: string): boolean {
    if (!this.isOp(text)) return false;
    this.pos++;
    return true;
  }

  /** A keyword or NAME test (`'if'`, `'not'`, NAME, …): never true here, but it reads the token. */
  private name(): false {
    this.peek();
    return false;
  }

  private enter(): void {
    if (this.level++ >= MAXSTACK) throw new RetailToolError('', 'MemoryError');
  }

  private leave<T>(value: T): T {
    this.level--;
    return value;
  }

  private recall(rule: number): unknown {
    const hit = this.memo.get(rule * this.tokens.length + this.pos);
    if (hit === undefined) return MISS;
    this.pos = hit.end;
    return hit.value;
  }

  /** Stores a memoized rule's result (its end, or its start when it failed). */
  private store<T>(rule: number, start: number, value: T | null): T | null {
    if (value === null) this.pos = start;
    this.memo.set(rule * this.tokens.length + start, { end: this.pos, value });
    return value;
  }

  // --- rules --------------------------------------------------------------------------------------------

  /** eval: expressions NEWLINE* ENDMARKER */
  parseEval(): Node | null {
    const a = this.expressions();
    if (a === null) return null;
    return this.peek().kind === 'ENDMARKER' ? a : null;
  }

  /** expressions: expression (',' expression)+ [','] | expression ',' | expression  (no ',' here) */
  private expressions(): Node | null {
    this.enter();
    const a = this.expression();
    if (a !== null) this.isOp(','); // the first two alternatives look for a ','
    return this.leave(a);
  }

  /** expression (memo): invalid_expression | invalid_legacy_expression | disjunction 'if' … | disjunction | lambdef */
  private expression(): Node | null {
    this.enter();
    const hit = this.recall(EXPRESSION);
    if (hit !== MISS) return this.leave(hit as Node | null);
    const start = this.pos;
    if (this.invalid) {
      this.invalidExpression();
      this.name(); // invalid_legacy_expression: NAME
    }
    let result = this.chain();
    if (result !== null)
      this.name(); // 'if': the first alternative fails, the plain disjunction is the same
    else this.name(); // lambdef: 'lambda'
    result = this.store(EXPRESSION, start, result);
    return this.leave(result);
  }

  /** invalid_expression: a=disjunction b=expression_without_invalid (raises inside parentheses) | … 'if' … */
  private invalidExpression(): void {
    this.enter();
    const start = this.pos;
    this.name(); // !(NAME STRING | SOFT_KEYWORD)
    if (this.chain() !== null && this.expressionWithoutInvalid() !== null) {
      if (this.tokens[this.pos - 1]!.level > 0) throw syntaxError('invalid syntax. Perhaps you forgot a comma?');
    }
    this.pos = start;
    if (this.chain() !== null) this.name(); // a=disjunction 'if' …
    this.pos = start;
    this.leave(null);
  }

  /** expression_without_invalid: the expression alternatives with the invalid rules off. */
  private expressionWithoutInvalid(): Node | null {
    this.enter();
    const saved = this.invalid;
    this.invalid = false;
    const result = this.chain();
    this.name(); // 'if' after the disjunction, or 'lambda'
    this.invalid = saved;
    return this.leave(result);
  }

  /** disjunction … sum (memo): term (('+' | '-') term)*, then the look for each level's operator. */
  private chain(): Node | null {
    this.enter();
    const hit = this.recall(CHAIN);
    if (hit !== MISS) return this.leave(hit as Node | null);
    const start = this.pos;
    const sum = this.sum();
    if (sum !== null) this.peek(); // 'or', 'and', comparison operators, '|', '^', '&', '<<', '>>'
    return this.leave(this.store(CHAIN, start, sum));
  }

  private sum(): Node | null {
    this.enter();
    const hit = this.recall(SUM);
    if (hit !== MISS) return this.leave(hit as Node | null);
    const start = this.pos;
    let left = this.term();
    while (left !== null) {
      const mark = this.pos;
      const op = this.isOp('+') ? '+' : this.isOp('-') ? '-' : null;
      if (op === null) break;
      this.pos++;
      const right = this.term();
      if (right === null) {
        this.pos = mark;
        break;
      }
      left = { type: 'binary', op, left, right };
    }
    return this.leave(this.store(SUM, start, left));
  }

  private term(): Node | null {
    this.enter();
    const hit = this.recall(TERM);
    if (hit !== MISS) return this.leave(hit as Node | null);
    const start = this.pos;
    let left = this.factor();
    while (left !== null) {
      const mark = this.pos;
      const op = this.isOp('*') ? '*' : this.isOp('/') ? '/' : this.isOp('//') ? '//' : null; // also '%', '@'
      if (op === null) break;
      this.pos++;
      const right = this.factor();
      if (right === null) {
        this.pos = mark;
        break;
      }
      left = { type: 'binary', op, left, right };
    }
    return this.leave(this.store(TERM, start, left));
  }

  /**
   * factor (memo): '+' factor | '-' factor | '~' factor | power. A run of signs is read in a loop (a deep
   * recursion would exhaust JavaScript's stack long before Python's parser stack): when the power after the
   * signs fails, each level's remaining alternative (power at a sign) fails too, without reading further.
   */
  private factor(): Node | null {
    this.enter();
    const hit = this.recall(FACTOR);
    if (hit !== MISS) return this.leave(hit as Node | null);
    const start = this.pos;
    const ops: ('+' | '-')[] = [];
    for (;;) {
      const op = this.isOp('+') ? '+' : this.isOp('-') ? '-' : null;
      if (op === null) break;
      if (this.level + ops.length >= MAXSTACK) throw new RetailToolError('', 'MemoryError');
      ops.push(op);
      this.pos++;
    }
    this.isOp('~');
    let node = this.power();
    if (node !== null) {
      for (let i = ops.length - 1; i >= 0; i--) node = { type: 'unary', op: ops[i]!, operand: node };
    }
    return this.leave(this.store(FACTOR, start, node));
  }

  /** power: await_primary '**' factor | await_primary */
  private power(): Node | null {
    this.enter();
    const start = this.pos;
    const left = this.awaitPrimary();
    if (left !== null && this.expect('**')) {
      const right = this.factor();
      if (right !== null) return this.leave({ type: 'binary', op: '**', left, right });
    }
    this.pos = start;
    return this.leave(this.awaitPrimary());
  }

  /** await_primary (memo): AWAIT primary | primary */
  private awaitPrimary(): Node | null {
    this.enter();
    const hit = this.recall(AWAIT_PRIMARY);
    if (hit !== MISS) return this.leave(hit as Node | null);
    const start = this.pos;
    this.name(); // AWAIT
    return this.leave(this.store(AWAIT_PRIMARY, start, this.primary()));
  }

  /** primary (left-recursive): primary '.' NAME | primary genexp | primary '(' [arguments] ')' | primary '[' … | atom */
  private primary(): Node | null {
    this.enter();
    const hit = this.recall(PRIMARY);
    if (hit !== MISS) return this.leave(hit as Node | null);
    const start = this.pos;
    let left = this.atom();
    while (left !== null) {
      const mark = this.pos;
      if (this.expect('.')) this.name(); // primary '.' NAME
      this.pos = mark;
      this.genexp(); // primary genexp: never a generator without 'for'
      if (this.expect('(')) {
        const arg = this.arguments() ?? undefined;
        if (this.expect(')')) {
          left = { type: 'call', func: left, arg };
          continue;
        }
      }
      this.pos = mark;
      this.isOp('['); // primary '[' slices ']'
      break;
    }
    return this.leave(this.store(PRIMARY, start, left));
  }

  /** atom: NAME | 'True' | 'False' | 'None' | STRING | NUMBER | &'(' (tuple | group | genexp) | … | '...' */
  private atom(): Node | null {
    this.enter();
    const token = this.peek();
    if (token.kind === 'NUMBER') {
      this.pos++;
      return this.leave(numberNode(token.text));
    }
    if (this.isOp('(')) return this.leave(this.tuple() ?? this.group() ?? this.genexp());
    if (this.expect('...')) return this.leave({ type: 'ellipsis' });
    return this.leave(null);
  }

  /** tuple: '(' [star_named_expression ',' [star_named_expressions]] ')'  (only "()" without a ',') */
  private tuple(): Node | null {
    this.enter();
    const start = this.pos;
    if (this.expect('(')) {
      const inner = this.pos;
      if (this.starNamedExpression() !== null) this.isOp(',');
      this.pos = inner;
      if (this.expect(')')) return this.leave({ type: 'tuple' });
    }
    this.pos = start;
    return this.leave(null);
  }

  /** group: '(' (yield_expr | named_expression) ')' | invalid_group */
  private group(): Node | null {
    this.enter();
    const start = this.pos;
    if (this.expect('(')) {
      this.name(); // yield_expr: 'yield'
      const inner = this.namedExpression();
      if (inner !== null && this.expect(')')) return this.leave(inner);
    }
    this.pos = start;
    if (this.invalid) this.invalidGroup();
    return this.leave(null);
  }

  /** genexp: '(' (assignment_expression | expression !':=') for_if_clauses ')' | invalid_comprehension */
  private genexp(): null {
    this.enter();
    const start = this.pos;
    if (this.expect('(')) {
      this.name(); // assignment_expression: NAME ':=' …
      if (this.expression() !== null) {
        this.isOp(':=');
        this.name(); // for_if_clauses: ASYNC 'for' … | 'for' … | invalid_for_target
      }
    }
    this.pos = start;
    if (this.invalid) this.invalidComprehension();
    return this.leave(null);
  }

  /** named_expression: assignment_expression | invalid_named_expression | expression !':=' */
  private namedExpression(): Node | null {
    this.enter();
    const start = this.pos;
    this.name(); // assignment_expression
    if (this.invalid) this.invalidNamedExpression();
    const e = this.expression();
    if (e !== null && !this.isOp(':=')) return this.leave(e);
    this.pos = start;
    return this.leave(null);
  }

  /** invalid_named_expression (memo): expression ':=' … | NAME '=' … | !(list|tuple|genexp|…) bitwise_or '=' … */
  private invalidNamedExpression(): void {
    this.enter();
    const hit = this.recall(INVALID_NAMED_EXPRESSION);
    if (hit !== MISS) return void this.leave(null);
    const start = this.pos;
    if (this.expression() !== null) this.isOp(':=');
    this.pos = start;
    this.name(); // NAME '='
    // !(list | tuple | genexp | 'True' | 'None' | 'False'), a lookahead: it consumes nothing
    let excluded = false;
    if (!this.isOp('[')) {
      excluded = this.tuple() !== null;
      if (!excluded) {
        this.genexp();
        this.name();
      }
    }
    this.pos = start;
    if (!excluded && this.chain() !== null) this.isOp('=');
    this.leave(this.store(INVALID_NAMED_EXPRESSION, start, null));
  }

  /** star_named_expression: '*' bitwise_or | named_expression */
  private starNamedExpression(): Node | null {
    this.enter();
    const start = this.pos;
    if (this.expect('*')) {
      const value = this.chain();
      if (value !== null) return this.leave(value);
    }
    this.pos = start;
    return this.leave(this.namedExpression());
  }

  /** starred_expression: '*' expression */
  private starredExpression(): Node | null {
    this.enter();
    const start = this.pos;
    if (this.expect('*')) {
      const value = this.expression();
      if (value !== null) return this.leave(value);
    }
    this.pos = start;
    return this.leave(null);
  }

  /** invalid_group: '(' starred_expression ')' | '(' '**' expression ')' */
  private invalidGroup(): void {
    this.enter();
    const start = this.pos;
    if (this.expect('(') && this.starredExpression() !== null && this.expect(')')) {
      throw syntaxError('cannot use starred expression here');
    }
    this.pos = start;
    if (this.expect('(') && this.expect('**') && this.expression() !== null && this.expect(')')) {
      throw syntaxError('cannot use double starred expression here');
    }
    this.pos = start;
    this.leave(null);
  }

  /** invalid_comprehension: ('[' | '(' | '{') starred_expression for_if_clauses | ('[' | '{') … (twice) */
  private invalidComprehension(): void {
    this.enter();
    const start = this.pos;
    if (this.expect('[') || this.expect('(') || this.expect('{')) {
      if (this.starredExpression() !== null) this.name(); // for_if_clauses
    }
    this.pos = start;
    if (!this.expect('[')) this.expect('{');
    this.pos = start;
    if (!this.expect('[')) this.expect('{');
    this.pos = start;
    this.leave(null);
  }

  /** arguments (memo): args [','] &')' | invalid_arguments */
  private arguments(): CallArg | null {
    this.enter();
    const hit = this.recall(ARGUMENTS);
    if (hit !== MISS) return this.leave(hit as CallArg | null);
    const start = this.pos;
    const args = this.args();
    if (args !== null) {
      this.expect(',');
      if (this.isOp(')')) return this.leave(this.store(ARGUMENTS, start, args));
    }
    this.pos = start;
    if (this.invalid) this.invalidArguments();
    return this.leave(this.store(ARGUMENTS, start, null));
  }

  /** args: ','.(starred_expression | (assignment_expression | expression !':=') !'=')+ [',' kwargs] | kwargs */
  private args(): CallArg | null {
    this.enter();
    const start = this.pos;
    let first: CallArg | null = null;
    const starred = this.starredExpression();
    if (starred !== null) first = { kind: 'star', value: starred };
    else {
      this.name(); // assignment_expression
      const e = this.expression();
      if (e !== null && !this.isOp(':=') && !this.isOp('=')) first = { kind: 'positional', value: e };
      else this.pos = start;
    }
    if (first !== null) {
      this.isOp(','); // more arguments, or [',' kwargs]
      return this.leave(first);
    }
    return this.leave(this.kwargs());
  }

  /** kwargs: ','.kwarg_or_starred+ ',' ','.kwarg_or_double_starred+ | ','.kwarg_or_starred+ | ','.kwarg_or_double_starred+ */
  private kwargs(): CallArg | null {
    this.enter();
    const start = this.pos;
    if (this.kwargOrStarred() !== null) this.isOp(','); // the first alternative needs a ','
    this.pos = start;
    const starred = this.kwargOrStarred();
    if (starred !== null) {
      this.isOp(',');
      return this.leave(starred);
    }
    this.pos = start;
    const doubleStarred = this.kwargOrDoubleStarred();
    if (doubleStarred !== null) {
      this.isOp(',');
      return this.leave(doubleStarred);
    }
    this.pos = start;
    return this.leave(null);
  }

  /** kwarg_or_starred: invalid_kwarg | NAME '=' expression | starred_expression */
  private kwargOrStarred(): CallArg | null {
    this.enter();
    if (this.invalid) this.invalidKwarg();
    this.name();
    const starred = this.starredExpression();
    return this.leave(starred === null ? null : { kind: 'star', value: starred });
  }

  /** kwarg_or_double_starred: invalid_kwarg | NAME '=' expression | '**' expression */
  private kwargOrDoubleStarred(): CallArg | null {
    this.enter();
    if (this.invalid) this.invalidKwarg();
    this.name();
    const start = this.pos;
    if (this.expect('**')) {
      const value = this.expression();
      if (value !== null) return this.leave({ kind: 'doublestar', value });
    }
    this.pos = start;
    return this.leave(null);
  }

  /** invalid_kwarg: ('True'|'False'|'None') '=' | NAME '=' expression for_if_clauses | !(NAME '=') expression '=' */
  private invalidKwarg(): void {
    this.enter();
    const start = this.pos;
    this.name();
    this.name();
    this.name(); // !(NAME '=')
    if (this.expression() !== null) this.isOp('=');
    this.pos = start;
    this.leave(null);
  }

  /** invalid_arguments: six alternatives, each needing a ',', 'for' or NAME after args or an expression. */
  private invalidArguments(): void {
    this.enter();
    const start = this.pos;
    if (this.args() !== null) this.expect(','); // args ',' '*'
    this.pos = start;
    if (this.expression() !== null) this.name(); // expression for_if_clauses …
    this.pos = start;
    this.name(); // NAME '=' …
    if (this.args() !== null) this.name(); // args for_if_clauses
    this.pos = start;
    if (this.args() !== null) this.expect(','); // args ',' expression for_if_clauses
    this.pos = start;
    if (this.args() !== null) this.expect(','); // args ',' args
    this.pos = start;
    this.leave(null);
  }
}

function numberNode(text: string): Node {
  if (text.includes('.')) return { type: 'float', value: Number(text) };
  const significant = text.replace(/^0+/, '');
  if (significant.length > INT_MAX_STR_DIGITS) {
    throw syntaxError(
      `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion: value has ${significant.length} digits; use sys.set_int_max_str_digits() to increase the limit - Consider hexadecimal for huge integer literals to avoid decimal conversion limits.`,
    );
  }
  return { type: 'int', value: BigInt(text) };
}

/** The expression's tree, or the SyntaxError (or MemoryError) Python's compile() raises for it. */
export function parseExpression(tokens: readonly Token[], emptySource: boolean): Node {
  const node = new Parser(tokens, false).parseEval();
  if (node !== null) return node;
  new Parser(tokens, true).parseEval();
  throw syntaxError('invalid syntax', emptySource ? 0 : 1);
}
