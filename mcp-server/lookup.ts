// Lookups over MCP that run nothing. By idempotency key (`_meta.reconcile`): what a call's effect
// came to, read from the tool's system of record by its reconcile hook; a client whose call was cut
// off (a worker crash, a cancel, a timeout) asks this instead of guessing; with `settle`, a key
// nobody recorded is closed as not made, so an attempt still in flight can no longer apply it.
// By owner (`_meta.owner`): whether the object a write would change is the caller's principal's.
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

/** Whose is the object the call's owned argument names: the principal's, another's, or none (null). */
export async function lookupOwner(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  principal: string | undefined,
  services: unknown,
): Promise<CallToolResult> {
  if (!tool.owner || tool.ownedArg === undefined) return lookupRefused(`${tool.name} changes no owned object`);
  const found = await tool.owner(args, { services });
  // Another's id is not the caller's business: only whether it is theirs.
  const owner = found === null ? null : found === principal ? 'principal' : 'other';
  return { content: [{ type: 'text', text: JSON.stringify({ owner }) }], structuredContent: { owner } };
}

function lookupRefused(detail: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `tool_error:reconcile: ${detail}` }],
    structuredContent: { reason: 'tool_error:reconcile', detail },
  };
}
