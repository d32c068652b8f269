// The activity `owner_<server>.<tool>`: whether the object a call would change is the run's
// principal's, asked of the MCP server (`_meta.owner`, with the call's arguments and principal).
// The workflow's gate compares the answer with the principal: another's is policy_denied:other_user
// before anyone is asked. A server that answers no lookup gets the call itself, which it may refuse.
import { MCP_META } from '../../common/mcp/meta';
import type { McpToolActivityInput } from './call-tool';
import { mcpLookupCall } from './lookup-call';

/** Stands for an owner other than the principal: never a principal the run could hold. */
const ANOTHER_PRINCIPAL = '(another principal)';

export async function ownerMcpTool(input: McpToolActivityInput): Promise<string | null> {
  const result = await mcpLookupCall(input, { [MCP_META.owner]: 'lookup' });
  const owner = (result.structuredContent as { owner?: unknown } | undefined)?.owner;
  if (result.isError || owner === null || owner === undefined) return null;
  return owner === 'principal' && input.principal !== undefined ? input.principal : ANOTHER_PRINCIPAL;
}
