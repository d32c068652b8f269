// Whose object an MCP call would change, asked of its server (the activity `owner_<server>.<tool>`,
// `_meta.owner`) for a tool whose config names an owned argument: the gate then refuses another
// principal's object before the customer or an operator is asked, as for a domain's own tools.
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import { connectionOf } from '../../common/mcp/config';
import type { McpConfig } from '../../common/mcp/config';
import type { McpCallInput } from '../../common/mcp/discovery';
import type { Tagged } from '../../common/temporal/step-tag';
import type { ToolInput } from '../../common/types';
import type { McpToolSpec } from './tools';
import type { AdmittedCall } from '../agent/step';

type McpOwnerFn = (input: Tagged<McpCallInput & Record<string, unknown>>) => Promise<string | null>;

export function ownerMcpActivity(
  spec: McpToolSpec,
  config: McpConfig,
  call: AdmittedCall,
  principal: ToolInput['principal'],
): Promise<string | null> {
  const activities = proxyActivities<Record<string, McpOwnerFn>>({
    activityId: `${call.step}-owner-${call.name}`,
    summary: `step ${call.step}: whose is the object ${call.name} would change (asked of ${spec.mcp.server})`,
    startToCloseTimeout: '10 seconds',
    retry: { maximumAttempts: 3 },
  });
  return activities[`owner_${call.name}`]!({
    server: spec.mcp.server,
    tool: spec.mcp.tool,
    connection: connectionOf(config.servers[spec.mcp.server]!),
    args: call.args,
    idempotency_key: '',
    ...(principal !== undefined ? { principal } : {}),
    // The run the server keeps its authentication for (activities/mcp/run-proof.ts).
    run_chain: workflowInfo().firstExecutionRunId,
    timeout_seconds: 10,
    trace: { step: call.step, role: 'owner' },
  });
}
