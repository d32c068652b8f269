// What listing a server's tools found, as the run records it once (the `mcp_list_tools` activity's
// result): replays read the same list, and a server that changes its tools later cannot change
// what the run may call.
import type { JsonSchema } from '../tools/catalog-entry';

export interface McpToolListing {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

export interface McpDiscovery {
  server: string;
  tools: McpToolListing[];
  /** SHA-256 of the listing (names, descriptions, schemas), to compare discoveries at a glance. */
  hash: string;
  /**
   * The listed tools no run may be offered, and why: their schema uses a keyword the gateway does
   * not enforce (checked-schema.ts). Absent in discoveries recorded before it.
   */
  unavailable?: Array<{ name: string; reason: string }>;
}

/** What the workflow sends to a server's tool activity (`<server>.<tool>`). */
export interface McpCallInput {
  server: string;
  tool: string;
  args: Record<string, unknown>;
  idempotency_key: string;
  principal?: string;
  /** The chain's first run id (the same across continue-as-new): the run the server's authentication is kept for. */
  run_chain?: string;
}
