// The tools by name, without their argument schemas' library (zod): what code that only checks a
// name needs (search attributes, the CLI's run listing) loads no more than this.
import type { ToolDefinition, ToolSpec } from './tool';

export type ToolRegistry = Readonly<Record<string, ToolDefinition>>;

/** The tools by name. */
export function registryOf<Services>(tools: readonly ToolDefinition<Services>[]): ToolRegistry {
  const registry: Record<string, ToolDefinition> = {};
  for (const tool of tools) {
    if (Object.prototype.hasOwnProperty.call(registry, tool.name)) throw new Error(`two tools named ${tool.name}`);
    registry[tool.name] = tool as ToolDefinition;
  }
  return registry;
}

/** The registry's entry for `name`, never an inherited property. */
export function specOf<Spec extends ToolSpec>(
  registry: Readonly<Record<string, Spec>>,
  name: string,
): Spec | undefined {
  return Object.prototype.hasOwnProperty.call(registry, name) ? registry[name] : undefined;
}

/** Search attributes carry registry names only: a model-invented tool name becomes `unknown`. */
export function registeredToolOr(registry: ToolRegistry, name: string, fallback = 'unknown'): string {
  return specOf(registry, name) ? name : fallback;
}
