// The worker's MCP activities: `mcp_list_tools` (a run's discovery) and the dynamic activity that
// runs any `<server>.<tool>` call (the tools differ per run). An effect cut off mid-call cannot be
// looked up by key on an MCP server: its `reconcile_<server>.<tool>` fails, and the run reports the
// effect as ambiguous.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Observation } from '../../common/types';
import { callMcpTool } from './call-tool';
import type { McpToolActivityInput } from './call-tool';
import { mcp_list_tools } from './list-tools';

/** The worker's fallback for activity types it has not registered: the MCP calls (`server.tool`). */
async function mcpDynamicActivity(input: unknown): Promise<Observation> {
  const type = Context.current().info.activityType;
  if (type.startsWith('reconcile_'))
    throw ApplicationFailure.nonRetryable(`${type}: an MCP server offers no lookup by idempotency key`, 'McpNoLookup');
  if (!type.includes('.'))
    throw ApplicationFailure.nonRetryable(`no activity named ${type} on this worker`, 'NotFound');
  return callMcpTool(input as McpToolActivityInput);
}

export function mcpActivities() {
  return { mcp_list_tools, default: mcpDynamicActivity };
}
