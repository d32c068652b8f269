// MCP servers' tools as tools of a run. At the run's start each configured server's tools are
// listed once (the `mcp_list_tools` activity, recorded in history and carried across
// continue-as-new), and the tools the config allows AND the server listed become ToolSpecs: their
// arguments checked in the workflow against the recorded JSON Schema (zod's fromJSONSchema), their
// options (timeout, retries, effect, confirmation, principal argument, sensitive fields) from the
// config. A tool the config does not allow, or a server did not list at discovery, is never a tool
// of the run, whatever the server lists later.
import { checkedArgs, schemaRefusal } from '../../common/mcp/checked-schema';
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Remaining } from '../../common/cost/budget';
import { connectionOf, MCP_TOOL_NAME, mcpToolName } from '../../common/mcp/config';
import type { McpConfig, McpToolConfig } from '../../common/mcp/config';
import type { McpCallInput, McpDiscovery, McpToolListing } from '../../common/mcp/discovery';
import type { Tagged } from '../../common/temporal/step-tag';
import type { ToolSpec } from '../../common/tools/tool-catalog';
import type { Observation, ToolInput } from '../../common/types';
import { toolCallSummary } from '../reporting/activity-summary';
import type { AdmittedCall } from '../agent/step';
import { toolActivityOptions } from '../calls/tool-options';

/** A run's MCP tool: its spec, the recorded listing it came from, and where it lives. */
export interface McpToolSpec extends ToolSpec {
  mcp: { server: string; tool: string };
}

const DEFAULT_TIMEOUT_SECONDS = 30;
const DEFAULT_MAX_ATTEMPTS = 3;
/** Time an attempt has past its request's timeout to report it (an attempt's start-to-close is the sum). */
const REPORT_GRACE_S = 2;

/** Lists every configured server's tools (one activity each, in parallel). */
export function discoverMcpTools(config: McpConfig): Promise<McpDiscovery[]> {
  return Promise.all(
    Object.entries(config.servers).map(([server, settings]) => {
      const { mcp_list_tools } = proxyActivities<{
        mcp_list_tools(input: Tagged<{ server: string; connection: unknown }>): Promise<McpDiscovery>;
      }>({
        activityId: `mcp-list-${server}`,
        summary: `MCP: list the tools of ${server}`,
        startToCloseTimeout: '30 seconds',
        retry: { initialInterval: '500 milliseconds', maximumAttempts: 5 },
      });
      return mcp_list_tools({ server, connection: connectionOf(settings), trace: { step: 0, role: 'tool' } });
    }),
  );
}

/** The run's MCP tools: allowed by the config and listed at discovery; `conversation` decides who confirms. */
export function mcpToolSpecs(
  config: McpConfig,
  discoveries: readonly McpDiscovery[],
  conversation: boolean,
): McpToolSpec[] {
  const specs: McpToolSpec[] = [];
  for (const found of discoveries) {
    const rules = config.servers[found.server]?.tools ?? {};
    for (const listing of found.tools) {
      const rule = Object.hasOwn(rules, listing.name) ? rules[listing.name] : undefined;
      if (!rule?.allowed) continue;
      const spec = specOf(found.server, listing, rule, conversation);
      if (spec) specs.push(spec);
    }
  }
  return specs;
}

function specOf(
  server: string,
  listing: McpToolListing,
  rule: McpToolConfig,
  conversation: boolean,
): McpToolSpec | undefined {
  // A schema the gateway cannot enforce in full is a tool the run cannot gate: not offered.
  if (schemaRefusal(listing.inputSchema) !== undefined) return undefined;
  const args = checkedArgs(listing.inputSchema);
  const name = mcpToolName(server, listing.name);
  const confirm = rule.needs_confirmation === true;
  return {
    name,
    description: listing.description,
    args,
    // The model sees the schema the server listed, not zod's rendering of it.
    catalogEntry: { name, description: listing.description, args: listing.inputSchema },
    timeoutSeconds: rule.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS,
    maxAttempts: rule.max_attempts ?? DEFAULT_MAX_ATTEMPTS,
    // An MCP result says what happened: made when not an error, refused when its error says why.
    ...(rule.effectful ? { effectful: true, outcomeByOk: true } : {}),
    ...(rule.effectful && rule.reconcile_by_key ? { reconcileByKey: true } : {}),
    ...(confirm ? (conversation ? { needsConsent: true } : { needsApproval: true }) : {}),
    ...(rule.principal_arg !== undefined ? { principalArg: rule.principal_arg } : {}),
    ...(rule.owned_arg !== undefined ? { ownedArg: rule.owned_arg } : {}),
    ...(rule.authenticates ? { authenticates: true } : {}),
    ...(rule.sensitive ? { sensitive: [...rule.sensitive] } : {}),
    mcp: { server, tool: listing.name },
  };
}

/**
 * The names of every tool the run's servers listed or its config names (`<server>.<tool>`), kept
 * only when they are well-formed: they may be shown where model text may not (search attributes).
 */
export function mcpToolNames(config: McpConfig, discoveries: readonly McpDiscovery[]): ReadonlySet<string> {
  const names = new Set<string>();
  for (const [server, settings] of Object.entries(config.servers))
    for (const tool of Object.keys(settings.tools)) names.add(mcpToolName(server, tool));
  for (const found of discoveries)
    if (Object.hasOwn(config.servers, found.server))
      for (const listing of found.tools)
        if (MCP_TOOL_NAME.test(listing.name)) names.add(mcpToolName(found.server, listing.name));
  return names;
}

export function isMcpTool(spec: ToolSpec | undefined): spec is McpToolSpec {
  return spec !== undefined && Object.hasOwn(spec, 'mcp');
}

type McpToolFn = (input: Tagged<McpCallInput & Record<string, unknown>>) => Promise<Observation>;

/** Calls the MCP tool as the activity `<server>.<tool>`, its idempotency key and principal in `_meta`. */
export function callMcpToolActivity(
  spec: McpToolSpec,
  config: McpConfig,
  call: AdmittedCall,
  idempotencyKey: string,
  principal: ToolInput['principal'],
  left: Remaining,
): Promise<Observation> {
  const tools = proxyActivities<Record<string, McpToolFn>>({
    activityId: `${call.step}-${call.name}`,
    summary: toolCallSummary(call, left),
    // The activity ends its request at timeout_seconds and says so itself: given a moment more,
    // its count of calls (max_attempts) decides whether another attempt comes, not a timeout.
    ...toolActivityOptions({ ...spec, timeoutSeconds: spec.timeoutSeconds + REPORT_GRACE_S }),
  });
  return tools[call.name]!({
    server: spec.mcp.server,
    tool: spec.mcp.tool,
    connection: connectionOf(config.servers[spec.mcp.server]!),
    args: call.args,
    idempotency_key: idempotencyKey,
    ...(principal !== undefined ? { principal } : {}),
    // The run the server keeps its authentication for (activities/mcp/run-proof.ts).
    run_chain: workflowInfo().firstExecutionRunId,
    timeout_seconds: spec.timeoutSeconds,
    max_calls: spec.maxAttempts,
    ...(spec.sensitive ? { sensitive: [...spec.sensitive] } : {}),
    trace: { step: call.step, role: 'tool' },
  });
}
