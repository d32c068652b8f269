// eval(expression, {"__builtins__": None}, {}) for the expressions `calculate` accepts: compile (tokenize,
// parse, the compiler's recursion limit), then evaluate left to right as CPython's bytecode does.
import { RetailToolError } from '../errors';
import type { Node } from './parse';
import { parseExpression } from './parse';
import { tokenize } from './tokenize';
import type { Value } from './values';
import { binary, call, unary } from './values';

/**
 * The compiler's limit on nesting ("maximum recursion depth exceeded during compilation"): about 3000
 * levels, less the caller's own stack depth in CPython; a nesting this deep fails here at this depth.
 */
export const MAX_AST_DEPTH = 2980;

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
    case 'int':
      return { t: 'int', v: node.value };
    case 'float':
      return { t: 'float', v: node.value };
    case 'ellipsis':
      return { t: 'ellipsis' };
    case 'tuple':
      return { t: 'tuple' };
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
  const source = expression.replace(/^[ \t]+/, ''); // eval() strips leading spaces and tabs
  const tokens = tokenize(source);
  let tree: Node;
  try {
    tree = parseExpression(tokens, source.length === 0);
  } catch (e) {
    if (e instanceof RangeError) throw new RetailToolError('', 'MemoryError'); // JavaScript's stack, not Python's
    throw e;
  }
  if (depth(tree) > MAX_AST_DEPTH) {
    throw new RetailToolError('maximum recursion depth exceeded during compilation', 'RecursionError');
  }
  return evaluate(tree);
}
