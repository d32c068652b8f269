// A lookup at an MCP server (an owner, an effect by key): the call's tool and arguments with a
// `_meta` that tells the server to answer from its records and run nothing. One failure mapping
// for both lookups: a config refusal is final, anything else Temporal retries.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MCP_META } from '../../common/mcp/meta';
import type { McpToolActivityInput } from './call-tool';
import { runMeta } from './run-proof';
import { McpConfigError, withMcpClient } from './connect';

export async function mcpLookupCall(
  input: McpToolActivityInput,
  meta: Record<string, string>,
): Promise<CallToolResult> {
  const { cancellationSignal: signal, info } = Context.current();
  const runKey = info.workflowExecution?.workflowId;
  try {
    return (await withMcpClient(input.server, input.connection, signal, (client) =>
      client.callTool(
        {
          name: input.tool,
          arguments: input.args,
          _meta: {
            ...meta,
            ...runMeta(runKey, input.run_chain ?? info.workflowExecution?.runId),
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
}
