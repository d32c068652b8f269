// What the rest of the runtime asks about a domain's tools: the registry, the model's catalog,
// loop signatures and the default allowlist. Every function takes the registry it reads: common/
// knows no domain (domains/index.ts says which one the runtime runs).
import { seenCallHash, stableJson } from './hash';
import type { CatalogEntry } from './catalog-entry';
import type { ToolDefinition, ToolSpec } from './tool';
import { catalogEntryOf, specOf } from './index';

export { registeredToolOr, registryOf, specOf } from './registry';
export type { ToolRegistry } from './index';
export type {
  EffectFaults,
  PolicyContext,
  PolicyDecision,
  ToolContext,
  ToolDefinition,
  ToolOptions,
  ToolPolicy,
  ToolSpec,
} from './tool';
export type { CatalogEntry } from './catalog-entry';

/**
 * The loop detector's signature of a call: the tool and its schema-valid arguments, with each
 * free-text argument folded (Unicode NFKC, lower case, runs of whitespace as one space), hashed.
 * "refund", "Refund" and " REFUND " are one call; the signature is a short hash (carry.ts).
 */
export function loopSignatureFor(
  registry: Readonly<Record<string, ToolSpec>>,
): (name: string, args: Record<string, unknown>) => string {
  return (name, args) => {
    const fold = specOf(registry, name)?.freeText ?? [];
    const folded: Record<string, unknown> = { ...args };
    for (const key of fold) {
      const value = folded[key];
      if (typeof value === 'string') folded[key] = value.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
    }
    return seenCallHash(`${name}:${stableJson(folded)}`);
  };
}

/**
 * The allowlist when --allow is not given: every read-only tool. A tool that changes the world
 * must be allowed for a run explicitly.
 */
export function defaultAllowedTools(tools: readonly ToolSpec[]): readonly string[] {
  return tools.filter((tool) => !tool.effectful).map((t) => t.name);
}

/** What the model sees: only tools that are both registered and allowed. */
export function catalogFor(
  allow: readonly string[],
  registry: Readonly<Record<string, ToolDefinition>>,
): CatalogEntry[] {
  return allow.filter((name) => specOf(registry, name)).map((name) => catalogEntryOf(registry[name]!));
}
