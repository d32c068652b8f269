// The tools the runtime knows (the registry): name, what the model is told, the argument
// schema the gateway enforces, and how the activity is run. Activities implement them under the
// same names; the workflow only ever calls names found here.
import { z } from 'zod';
import { seenCallHash, stableJson } from './hash';

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
  /**
   * Changes the world (not only reads it): the activity heartbeats, a cancel waits for it to
   * acknowledge, and it must honour its idempotency key.
   */
  effectful?: boolean;
  /** The run pauses until an operator approves or rejects this exact call (`agent approve|reject`). */
  needsApproval?: boolean;
  /** Dot paths into the tool's observation data that the model and the logs never see (`*` = any key). */
  sensitive?: readonly string[];
  /** Free-text arguments: loop detection compares them without case, width or spacing differences. */
  freeText?: readonly string[];
}

const userId = z.number().int().positive().max(2_147_483_647);

/** A positive USD amount in whole cents, at most 10,000. */
const amountUsd = z
  .number()
  .positive()
  .max(10_000)
  .refine((n) => Math.abs(n * 100 - Math.round(n * 100)) < 1e-6, 'at most two decimals');

export const TOOL_REGISTRY: Record<string, ToolSpec> = {
  get_user_profile: {
    name: 'get_user_profile',
    description: 'Get user profile by user_id',
    argsDoc: { user_id: 'integer' },
    args: z.strictObject({ user_id: userId }),
    timeoutSeconds: 10,
    maxAttempts: 3,
    // A refund decision needs the tier and country, not the person's name.
    sensitive: ['user.name'],
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
    freeText: ['query'],
  },
  issue_refund: {
    name: 'issue_refund',
    description:
      "Refund the user: sends money back to the original payment method. Needs an operator's approval; " +
      'only for the user the run is for, after reading their billing record, within the refund policy, at most what was paid.',
    argsDoc: { user_id: 'integer', amount_usd: 'number (USD, two decimals)', reason: 'string' },
    args: z.strictObject({ user_id: userId, amount_usd: amountUsd, reason: z.string().trim().min(3).max(500) }),
    timeoutSeconds: 30,
    // Safe to retry: every attempt reconciles by idempotency key before it acts.
    maxAttempts: 5,
    effectful: true,
    needsApproval: true,
    freeText: ['reason'],
  },
};

/**
 * The loop detector's signature of a call: the tool and its schema-valid arguments, with each
 * free-text argument folded (Unicode NFKC, lower case, runs of whitespace as one space), hashed.
 * "refund", "Refund" and " REFUND " are one call; the signature is a short hash (carry.ts).
 */
export function loopSignature(name: string, args: Record<string, unknown>): string {
  const fold = TOOL_REGISTRY[name]?.freeText ?? [];
  const folded: Record<string, unknown> = { ...args };
  for (const key of fold) {
    const value = folded[key];
    if (typeof value === 'string') folded[key] = value.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
  }
  return seenCallHash(`${name}:${stableJson(folded)}`);
}

/** Search attributes carry registry names only: a model-invented tool name becomes `unknown`. */
export function registeredToolOr(name: string, fallback = 'unknown'): string {
  return Object.prototype.hasOwnProperty.call(TOOL_REGISTRY, name) ? name : fallback;
}

/**
 * The seeds' allowlist; the CLI uses it when --allow is not given. Read-only tools only: a tool
 * that moves money (issue_refund) must be allowed for a run explicitly.
 */
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
