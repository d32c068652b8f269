import type { z } from 'zod';
import type { RetailDB } from '../db';

/** tau2's ToolType of the reference's @is_tool(...) decorator. */
export type RetailToolKind = 'read' | 'write' | 'generic';

/**
 * One tool of the reference toolkit: its arguments (the reference's parameter names and docstring), and a
 * pure handler that changes `db` in place exactly as the reference does and returns the JSON of the
 * reference's result (a model_dump() snapshot, or the string), or throws a RetailToolError with the
 * reference's message. A tool that throws may have changed `db` already, as the reference does.
 */
export interface RetailTool<Args, Result> {
  readonly name: string;
  readonly kind: RetailToolKind;
  readonly description: string;
  readonly args: z.ZodType<Args>;
  readonly handler: (db: RetailDB, args: Args) => Result;
}
