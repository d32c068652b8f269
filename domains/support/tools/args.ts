// Argument schemas and options more than one support tool shares.
import { z } from 'zod';
import type { SupportServices } from '../services';
import { defineTool } from '../../../common/tools/tool';
import type { ToolDefinition } from '../../../common/tools/tool';

/** A user id as the support data spells it: a positive 32-bit integer. */
export const userId = z.number().int().positive().max(2_147_483_647);

/** The arguments of a lookup by user. */
export const byUserId = z.strictObject({ user_id: userId });

/** A read-only lookup: short, and safe to retry. */
export const LOOKUP_OPTIONS = { timeoutSeconds: 10, maxAttempts: 3 } as const;

/** Every tool with a user_id argument acts only for the run's principal. */
export const FOR_PRINCIPAL = { principalArg: 'user_id' } as const;

/** A support tool, checked: its handler gets the support services and the schema's output. */
export function defineSupportTool<Schema extends z.ZodType<Record<string, unknown>>>(
  tool: Parameters<typeof defineTool<SupportServices, Schema>>[0],
): ToolDefinition<SupportServices> {
  return defineTool<SupportServices, Schema>(tool);
}
