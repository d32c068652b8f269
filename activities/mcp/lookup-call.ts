// A lookup at an MCP server (an owner, an effect by key): the call's tool and arguments with a
// `_meta` that tells the server to answer from its records and run nothing. One failure mapping
// for both lookups: a config refusal is final, anything else Temporal retries.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolActivityInput } from './call-tool';
import { withRunMeta } from './run-proof';
import { runOf } from './run-of';
import { McpConfigError, withMcpClient } from './connect';
import { MCP_CONFIG, MCP_UNAVAILABLE } from '../../common/agent-messages';

export async function mcpLookupCall(
  input: McpToolActivityInput,
  meta: Record<string, string>,
): Promise<CallToolResult> {
  const { cancellationSignal: signal, info } = Context.current();
  const request = { name: input.tool, arguments: input.args };
  const run = runOf(input, info);
  try {
    return (await withMcpClient(input.server, input.connection, signal, run.session, (client) =>
      client.callTool({ ...request, _meta: withRunMeta(request, meta, run.identity) }, undefined, {
        signal,
        timeout: input.timeout_seconds * 1000,
      }),
    )) as CallToolResult;
  } catch (err) {
    if (err instanceof McpConfigError) throw ApplicationFailure.nonRetryable(err.message, MCP_CONFIG);
    throw ApplicationFailure.retryable(
      `${info.activityType}: ${err instanceof Error ? err.message : String(err)}`,
      MCP_UNAVAILABLE,
    );
  }
}
