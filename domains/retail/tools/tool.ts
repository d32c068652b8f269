import type { z } from 'zod';
import type { ToolDefinition, ToolSpec } from '../../../common/tools/tool';
import type { RetailDB } from '../db';
import type { RetailServices } from '../services';

/** tau2's ToolType of the reference's @is_tool(...) decorator. */
export type RetailToolKind = 'read' | 'write' | 'generic';

/**
 * One tool of the reference toolkit, as its file defines it with `defineRetailTool`: its arguments (the
 * reference's parameter names and docstring), and a pure handler that changes `db` in place exactly as the
 * reference does and returns the JSON of the reference's result (a model_dump() snapshot, or the string), or
 * throws a RetailToolError with the reference's message. A tool that throws may have changed `db` already,
 * as the reference does. The runtime's rules for a read (whom it needs) are its own options here; a write's
 * follow from its kind (domains/retail/define-tool.ts).
 */
export interface RetailToolSpec<Args, Result> extends Pick<
  ToolSpec,
  'authenticates' | 'principalArg' | 'namesPerson' | 'endsRun'
> {
  readonly name: string;
  readonly kind: RetailToolKind;
  readonly description: string;
  readonly args: z.ZodType<Args>;
  readonly handler: (db: RetailDB, args: Args) => Result;
}

/** A retail tool: the reference's function (what the differential test compares) and the runtime's tool. */
export interface RetailTool<Args, Result> extends RetailToolSpec<Args, Result> {
  readonly definition: ToolDefinition<RetailServices>;
}
