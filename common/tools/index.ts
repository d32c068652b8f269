// The tools the runtime knows. A new tool is one file in this folder and one line in TOOLS: the
// registry the workflow and the gateway read, the catalog the model sees and the activities a
// worker registers are all derived from this list.
import { z } from 'zod';
import type { CatalogEntry, JsonSchema } from './catalog-entry';
import { getUserBilling } from './get_user_billing';
import { getUserProfile } from './get_user_profile';
import { issueRefund } from './issue_refund';
import { searchPolicy } from './search_policy';
import type { ToolDefinition } from './tool';

export const TOOLS: readonly ToolDefinition[] = [getUserProfile, getUserBilling, searchPolicy, issueRefund];

/** The tools by name. */
export function registryOf(tools: readonly ToolDefinition[]): Readonly<Record<string, ToolDefinition>> {
  const registry: Record<string, ToolDefinition> = {};
  for (const tool of tools) {
    if (Object.prototype.hasOwnProperty.call(registry, tool.name)) throw new Error(`two tools named ${tool.name}`);
    registry[tool.name] = tool;
  }
  return registry;
}

export const TOOL_REGISTRY = registryOf(TOOLS);

/** The model's view of a tool's arguments: the JSON Schema of what it must send. */
export function argsSchemaOf(tool: ToolDefinition): JsonSchema {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(tool.args, { io: 'input', unrepresentable: 'any' });
  return schema;
}

const catalogCache = new Map<ToolDefinition, CatalogEntry>();

/** A tool's catalog entry, computed once per tool. */
export function catalogEntryOf(tool: ToolDefinition): CatalogEntry {
  let entry = catalogCache.get(tool);
  if (!entry) {
    entry = { name: tool.name, description: tool.description, args: argsSchemaOf(tool) };
    catalogCache.set(tool, entry);
  }
  return entry;
}
