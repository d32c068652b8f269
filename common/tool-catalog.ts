// What the rest of the runtime asks about tools: the registry (derived from the one-file-per-tool
// list in common/tools/), the model's catalog, loop signatures and the default allowlist.
import { seenCallHash, stableJson } from './hash';
import type { CatalogEntry } from './tools/catalog-entry';
import type { ToolDefinition } from './tools/tool';
import { catalogEntryOf, TOOL_REGISTRY, TOOLS } from './tools/index';

export { TOOL_REGISTRY, TOOLS } from './tools/index';
export type { ToolContext, ToolDefinition, ToolOptions, ToolSpec } from './tools/tool';
export type { CatalogEntry } from './tools/catalog-entry';

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
 * The allowlist when --allow is not given: every read-only tool (the seeds' three). A tool that
 * changes the world (issue_refund) must be allowed for a run explicitly.
 */
export const DEFAULT_ALLOWED_TOOLS: readonly string[] = TOOLS.filter((tool) => !tool.effectful).map((t) => t.name);

/** What the model sees: only tools that are both registered and allowed. */
export function catalogFor(
  allow: readonly string[],
  registry: Readonly<Record<string, ToolDefinition>> = TOOL_REGISTRY,
): CatalogEntry[] {
  return allow
    .filter((name) => Object.prototype.hasOwnProperty.call(registry, name))
    .map((name) => catalogEntryOf(registry[name]!));
}
