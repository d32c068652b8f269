import { z } from 'zod';
import { RetailToolError } from '../errors';
import { floatRepr, pyRound } from '../python/float';
import { pyEval } from '../python/evaluate';
import { toFloat } from '../python/values';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  expression: z
    .string()
    .describe(
      "The mathematical expression to calculate, such as '2 + 2'. The expression can contain numbers, operators (+, -, *, /), parentheses, and spaces.",
    ),
});

const ALLOWED = new Set('0123456789+-*/(). ');

/**
 * str(round(float(eval(expression)), 2)): the expression is evaluated with Python's semantics (ints of any
 * size, true division, `**` and `//`, complex results of negative bases), and any exception eval raises is
 * the tool's error with Python's message.
 */
function handler(_db: unknown, { expression }: z.infer<typeof args>): string {
  for (const ch of expression) {
    if (!ALLOWED.has(ch)) throw new RetailToolError('Invalid characters in expression');
  }
  const value = pyEval(expression);
  if (value.t !== 'int' && value.t !== 'float') {
    throw new RetailToolError(`float() argument must be a string or a real number, not '${value.t}'`, 'TypeError');
  }
  return floatRepr(pyRound(toFloat(value), 2));
}

export const calculate = defineRetailTool<z.infer<typeof args>, string>({
  name: 'calculate',
  kind: 'generic',
  description: 'Calculate the result of a mathematical expression.',
  args,
  handler,
});
