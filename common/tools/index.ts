// A domain's tools as the runtime reads them: by name (the registry), and as the model sees them
// (the catalog). Which tools exist is the domain's business (domains/<name>/tools/).
import { z } from 'zod';
import type { CatalogEntry, JsonSchema } from './catalog-entry';
import type { ToolSpec } from './tool';

export { registryOf, specOf } from './registry';
export type { ToolRegistry } from './registry';

/** The model's view of a tool's arguments: the JSON Schema of what it must send. */
export function argsSchemaOf(tool: ToolSpec): JsonSchema {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(tool.args, { io: 'input', unrepresentable: 'any' });
  return schema;
}

const catalogCache = new Map<ToolSpec, CatalogEntry>();

/** A tool's catalog entry, computed once per tool. */
export function catalogEntryOf(tool: ToolSpec): CatalogEntry {
  if (tool.catalogEntry) return tool.catalogEntry;
  let entry = catalogCache.get(tool);
  if (!entry) {
    entry = { name: tool.name, description: tool.description, args: argsSchemaOf(tool) };
    catalogCache.set(tool, entry);
  }
  return entry;
}
