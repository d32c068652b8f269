// The tools the runtime knows (the registry): name, what the model is told, the argument
// schema the gateway enforces, and how the activity is run. Activities implement them under the
// same names; the workflow only ever calls names found here.
import { z } from 'zod';

export interface ToolSpec {
  name: string;
  description: string;
  /** Shown to the model in the catalog. */
  argsDoc: Record<string, string>;
  /** Enforced by the gateway; strict, so unknown arguments are rejected. */
  args: z.ZodType<Record<string, unknown>>;
  /** Per-attempt timeout of the tool's activity. */
  timeoutSeconds: number;
  maxAttempts: number;
}

const userId = z.number().int().positive().max(2_147_483_647);

export const TOOL_REGISTRY: Record<string, ToolSpec> = {
  get_user_profile: {
    name: 'get_user_profile',
    description: 'Get user profile by user_id',
    argsDoc: { user_id: 'integer' },
    args: z.strictObject({ user_id: userId }),
    timeoutSeconds: 10,
    maxAttempts: 3,
  },
  get_user_billing: {
    name: 'get_user_billing',
    description: 'Get billing info by user_id',
    argsDoc: { user_id: 'integer' },
    args: z.strictObject({ user_id: userId }),
    timeoutSeconds: 10,
    maxAttempts: 3,
  },
  search_policy: {
    name: 'search_policy',
    description: 'Search refund and billing policy snippets',
    argsDoc: { query: 'string' },
    args: z.strictObject({ query: z.string().trim().min(1).max(500) }),
    timeoutSeconds: 10,
    maxAttempts: 3,
  },
};

/** The seeds' allowlist; the CLI uses it when --allow is not given. */
export const DEFAULT_ALLOWED_TOOLS = ['get_user_profile', 'get_user_billing', 'search_policy'];

export interface CatalogEntry {
  name: string;
  description: string;
  args: Record<string, string>;
}

/** What the model sees: only tools that are both registered and allowed. */
export function catalogFor(allow: readonly string[]): CatalogEntry[] {
  return allow
    .filter((name) => Object.prototype.hasOwnProperty.call(TOOL_REGISTRY, name))
    .map((name) => {
      const spec = TOOL_REGISTRY[name]!;
      return { name: spec.name, description: spec.description, args: spec.argsDoc };
    });
}
