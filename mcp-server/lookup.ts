// A lookup by idempotency key over MCP (`_meta.reconcile`): what a call's effect came to, read from
// the tool's system of record by its reconcile hook, with nothing run. A client whose call was cut
// off (a worker crash, a cancel, a timeout) asks this instead of guessing; with `settle`, a key
// nobody recorded is closed as not made, so an attempt still in flight can no longer apply it.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolDefinition } from '../common/tools/tool';

export async function lookupByKey(
  tool: ToolDefinition,
  key: string | undefined,
  settle: boolean,
  services: unknown,
): Promise<CallToolResult> {
  if (!tool.reconcile) return lookupRefused(`${tool.name} has no lookup by idempotency key`);
  if (key === undefined) return lookupRefused('a lookup needs _meta.idempotency_key');
  const found = await tool.reconcile({ idempotency_key: key, settle }, { services });
  return { content: [{ type: 'text', text: JSON.stringify(found) }], structuredContent: { ...found } };
}

function lookupRefused(detail: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `tool_error:reconcile: ${detail}` }],
    structuredContent: { reason: 'tool_error:reconcile', detail },
  };
}
