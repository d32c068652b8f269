// The activity `owner_<server>.<tool>`: whether the object a call would change is the run's
// principal's, asked of the MCP server (`_meta.owner`, with the call's arguments and principal).
// The workflow's gate compares the answer with the principal: another's is policy_denied:other_user
// before anyone is asked. A server that answers no lookup gets the call itself, which it may refuse.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MCP_META } from '../../common/mcp/meta';
import type { McpToolActivityInput } from './call-tool';
import { McpConfigError, withMcpClient } from './connect';

/** Stands for an owner other than the principal: never a principal the run could hold. */
const ANOTHER_PRINCIPAL = '(another principal)';

export async function ownerMcpTool(input: McpToolActivityInput): Promise<string | null> {
  const { cancellationSignal: signal, info } = Context.current();
  let result: CallToolResult;
  try {
    result = (await withMcpClient(input.server, input.connection, signal, (client) =>
      client.callTool(
        {
          name: input.tool,
          arguments: input.args,
          _meta: {
            [MCP_META.owner]: 'lookup',
            ...(info.workflowExecution?.workflowId ? { [MCP_META.runKey]: info.workflowExecution.workflowId } : {}),
            ...(input.principal !== undefined ? { [MCP_META.principal]: input.principal } : {}),
          },
        },
        undefined,
        { signal, timeout: input.timeout_seconds * 1000 },
      ),
    )) as CallToolResult;
  } catch (err) {
    if (err instanceof McpConfigError) throw ApplicationFailure.nonRetryable(err.message, 'McpConfig');
    throw ApplicationFailure.retryable(
      `${info.activityType}: ${err instanceof Error ? err.message : String(err)}`,
      'McpUnavailable',
    );
  }
  const owner = (result.structuredContent as { owner?: unknown } | undefined)?.owner;
  if (result.isError || owner === null || owner === undefined) return null;
  return owner === 'principal' && input.principal !== undefined ? input.principal : ANOTHER_PRINCIPAL;
}
