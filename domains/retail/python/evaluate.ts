// eval(expression, {"__builtins__": None}, {}) for the characters `calculate` lets through
// ("0123456789+-*/(). "): Python's grammar restricted to that alphabet (numbers, `...`, `()`, + - * / // **,
// unary + -, parentheses, calls with one argument, `*x` or `**x`), evaluated left to right as CPython does.
// An input Python refuses to compile is refused here with the same class (SyntaxError, or the parser's and
// compiler's nesting limits); the SyntaxError texts are short texts of our own, not CPython's.
import { RetailToolError } from '../errors';
import type { BinaryOp, Value } from './values';
import { INT_MAX_STR_DIGITS, binary, call, unary } from './values';

type Node =
  | { readonly type: 'value'; readonly value: Value }
  | { readonly type: 'unary'; readonly op: '+' | '-'; readonly operand: Node }
  | { readonly type: 'binary'; readonly op: BinaryOp; readonly left: Node; readonly right: Node }
  | { readonly type: 'call'; readonly func: Node; readonly arg: CallArg | undefined };

interface CallArg {
  readonly kind: 'positional' | 'star' | 'doublestar';
  readonly value: Node;
}

/** The tokenizer's limit on open parentheses. */
const MAX_PARENS = 200;
/** The C parser's stack (MAXSTACK); a unary operator or `**` costs one level, a parenthesis twelve (measured). */
const MAX_PARSER_LEVEL = 6000;
const PAREN_LEVELS = 12;
/** The compiler's limit on nesting ("maximum recursion depth exceeded during compilation"), about. */
export const MAX_AST_DEPTH = 2980;

const syntaxError = (message: string) => new RetailToolError(message, 'SyntaxError');
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** Numbers, `...` and the operators; the tokenizer's errors (leading zeros, parentheses) come first. */
function tokenize(source: string): string[] {
  const tokens: string[] = [];
  let open = 0;
  let i = 0;
  const digitsFrom = (j: number): number => {
    while (isDigit(source[j])) j++;
    return j;
  };
  while (i < source.length) {
    const c = source[i]!;
    const start = i;
    if (c === ' ') {
      i++;
      continue;
    }
    if (isDigit(c) || (c === '.' && isDigit(source[i + 1]))) {
      i = digitsFrom(i);
      if (source[i] === '.') i = digitsFrom(i + 1);
      else if (/^0+[1-9]/.test(source.slice(start, i))) throw syntaxError('leading zeros in an integer');
    } else if (source.startsWith('...', i)) i += 3;
    else if ((c === '*' || c === '/') && source[i + 1] === c) i += 2;
    else {
      if (c === '(' && ++open > MAX_PARENS) throw syntaxError('too many nested parentheses');
      if (c === ')' && --open < 0) throw syntaxError("unmatched ')'");
      i++;
    }
    tokens.push(source.slice(start, i));
  }
  if (open > 0) throw syntaxError("'(' never closed");
  return tokens;
}

function number(text: string): Value {
  if (text.includes('.')) return { t: 'float', v: Number(text) };
  if (text.replace(/^0+/, '').length > INT_MAX_STR_DIGITS) throw syntaxError('integer literal too long');
  return { t: 'int', v: BigInt(text) };
}

/** sum: term (('+'|'-') term)*; term: factor (('*'|'/'|'//') factor)*; factor: ('+'|'-')* power. */
class Parser {
  private pos = 0;
  private level = 6; // the rules above the first operand

  constructor(private readonly tokens: readonly string[]) {}

  parse(): Node {
    const node = this.sum();
    if (this.pos < this.tokens.length) throw syntaxError(`invalid syntax at '${this.tokens[this.pos]}'`);
    return node;
  }

  private take(...ops: string[]): string | undefined {
    const token = this.tokens[this.pos];
    if (token === undefined || !ops.includes(token)) return undefined;
    this.pos++;
    return token;
  }

  private sum(): Node {
    let left = this.term();
    for (let op; (op = this.take('+', '-'));) left = { type: 'binary', op: op as BinaryOp, left, right: this.term() };
    return left;
  }

  private term(): Node {
    let left = this.factor();
    for (let op; (op = this.take('*', '/', '//'));) {
      left = { type: 'binary', op: op as BinaryOp, left, right: this.factor() };
    }
    return left;
  }

  private factor(): Node {
    // Iterative over the operators, since thousands of them may precede one operand.
    const ops: ('+' | '-')[] = [];
    for (let op; (op = this.take('+', '-'));) ops.push(op as '+' | '-');
    this.level += ops.length;
    if (this.level > MAX_PARSER_LEVEL) throw new RetailToolError('', 'MemoryError');
    let node = this.power();
    this.level -= ops.length;
    while (ops.length > 0) node = { type: 'unary', op: ops.pop()!, operand: node };
    return node;
  }

  private power(): Node {
    const left = this.primary();
    if (!this.take('**')) return left;
    this.level += 1;
    const right = this.factor();
    this.level -= 1;
    return { type: 'binary', op: '**', left, right };
  }

  /** atom ('(' [argument] ')')* */
  private primary(): Node {
    let node = this.atom();
    while (this.take('(')) {
      const arg = this.take(')') ? undefined : this.nested(() => this.argument());
      if (arg !== undefined && !this.take(')')) throw syntaxError("expected ')'");
      node = { type: 'call', func: node, arg };
    }
    return node;
  }

  private argument(): CallArg {
    const star = this.take('*', '**');
    const kind = star === '*' ? 'star' : star === '**' ? 'doublestar' : 'positional';
    return { kind, value: this.sum() };
  }

  /** NUMBER | '...' | '(' ')' | '(' sum ')' */
  private atom(): Node {
    const token = this.tokens[this.pos++];
    if (token === '...') return { type: 'value', value: { t: 'ellipsis' } };
    if (token === '(') {
      if (this.take(')')) return { type: 'value', value: { t: 'tuple' } };
      const inner = this.nested(() => this.sum());
      if (!this.take(')')) throw syntaxError("expected ')'");
      return inner;
    }
    if (token !== undefined && (isDigit(token[0]) || isDigit(token[1]))) return { type: 'value', value: number(token) };
    throw syntaxError(token === undefined ? 'unexpected end of expression' : `invalid syntax at '${token}'`);
  }

  private nested<T>(parse: () => T): T {
    this.level += PAREN_LEVELS;
    const result = parse();
    this.level -= PAREN_LEVELS;
    return result;
  }
}

function depth(node: Node): number {
  // Iterative, since the tree may be deeper than JavaScript's stack.
  let max = 0;
  const stack: [Node, number][] = [[node, 1]];
  while (stack.length > 0) {
    const [n, d] = stack.pop()!;
    if (d > max) max = d;
    if (n.type === 'unary') stack.push([n.operand, d + 1]);
    else if (n.type === 'binary') stack.push([n.left, d + 1], [n.right, d + 1]);
    else if (n.type === 'call') {
      stack.push([n.func, d + 1]);
      if (n.arg !== undefined) stack.push([n.arg.value, n.arg.kind === 'star' ? d + 2 : d + 1]);
    }
  }
  return max;
}

function evaluate(node: Node): Value {
  switch (node.type) {
    case 'value':
      return node.value;
    case 'unary':
      return unary(node.op, evaluate(node.operand));
    case 'binary': {
      const left = evaluate(node.left);
      return binary(node.op, left, evaluate(node.right));
    }
    case 'call': {
      const func = evaluate(node.func);
      const arg = node.arg === undefined ? undefined : { kind: node.arg.kind, value: evaluate(node.arg.value) };
      return call(func, arg);
    }
  }
}

/** The value of a Python expression of digits, + - * / ( ) . and spaces, or the exception Python raises. */
export function pyEval(expression: string): Value {
  const tokens = tokenize(expression);
  if (tokens.length === 0) throw syntaxError('empty expression');
  let tree: Node;
  try {
    tree = new Parser(tokens).parse();
  } catch (e) {
    if (e instanceof RangeError) throw new RetailToolError('', 'MemoryError'); // JavaScript's stack, not Python's
    throw e;
  }
  if (depth(tree) > MAX_AST_DEPTH) {
    throw new RetailToolError('maximum recursion depth exceeded during compilation', 'RecursionError');
  }
  return evaluate(tree);
}
