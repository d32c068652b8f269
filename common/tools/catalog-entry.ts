// One tool as the model sees it in the decision payload's available_tools.

/** A JSON Schema object (draft 2020-12), as z.toJSONSchema writes it. */
export type JsonSchema = Record<string, unknown>;

export interface CatalogEntry {
  name: string;
  description: string;
  /** The tool's arguments: the JSON Schema of the same zod schema the gateway enforces. */
  args: JsonSchema;
}
