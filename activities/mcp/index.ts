// The worker's MCP activities: `mcp_list_tools` (a run's discovery) and the dynamic activity that
// runs any `<server>.<tool>` call (the tools differ per run), `reconcile_<server>.<tool>` (the
// lookup by key of an effect cut off mid-call) and `owner_<server>.<tool>` (whose object a call
// would change), the lookups at a server the config says answers them. Each is loaded with its first
// call: they bring the MCP SDK, which a worker whose runs use no MCP server never needs.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Observation, ReconcileOutput } from '../../common/types';
import type { McpToolActivityInput } from './call-tool';
import type { ListToolsInput } from './list-tools';
import type { McpDiscovery } from '../../common/mcp/discovery';
import { mcpToolName } from '../../common/mcp/config';
import { ACTIVITY_NOT_FOUND } from '../../common/agent-messages';

/** The worker's fallback for activity types it has not registered: the MCP calls (`server.tool`). */
async function mcpDynamicActivity(input: unknown): Promise<Observation | ReconcileOutput | string | null> {
  const type = Context.current().info.activityType;
  if (!type.includes('.'))
    throw ApplicationFailure.nonRetryable(`no activity named ${type} on this worker`, ACTIVITY_NOT_FOUND);
  const call = input as McpToolActivityInput;
  // By the whole name: a server may itself be called `reconcile_...`.
  if (type === `reconcile_${mcpToolName(call.server, call.tool)}`)
    return (await import('./reconcile-tool')).reconcileMcpTool(call);
  if (type === `owner_${mcpToolName(call.server, call.tool)}`) return (await import('./owner-tool')).ownerMcpTool(call);
  return (await import('./call-tool')).callMcpTool(call);
}

async function mcp_list_tools(input: ListToolsInput): Promise<McpDiscovery> {
  return (await import('./list-tools')).mcp_list_tools(input);
}

export function mcpActivities() {
  return { mcp_list_tools, default: mcpDynamicActivity };
}
