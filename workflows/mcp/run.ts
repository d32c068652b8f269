// A run's MCP tools joined to its domain: discovered once at the run's first start (recorded) or
// taken from what the previous run of the chain carried, then resolved into the run's registry and
// allowlist. The config's allowed tools are the allowlist of MCP tools (the input's `allow` names
// the domain's); everything else a server offers is denied.
import type { Domain } from '../../common/domain';
import type { McpConfig } from '../../common/mcp/config';
import type { McpDiscovery } from '../../common/mcp/discovery';
import { registryOf } from '../../common/tools/tool-catalog';
import type { ToolDefinition, ToolRegistry } from '../../common/tools/tool-catalog';
import type { AgentInput } from '../../common/types';
import { discoverMcpTools, mcpToolNames, mcpToolSpecs } from './tools';

export interface McpRun {
  config: McpConfig;
  discovery: McpDiscovery[];
  domain: Domain;
  registry: ToolRegistry;
  allow: readonly string[];
  /** `<server>.<tool>` for every tool a server listed or the config names: what a stop reason may name. */
  names: ReadonlySet<string>;
}

export async function joinMcpTools(input: AgentInput, domain: Domain): Promise<McpRun | undefined> {
  const config = input.mcp;
  if (!config) return undefined;
  const discovery = input.carried?.mcp_discovery ?? (await discoverMcpTools(config));
  const specs = mcpToolSpecs(config, discovery, input.conversation !== undefined);
  // The workflow reads a tool's spec only; its handler runs in the worker's MCP activity.
  const tools = [...domain.tools, ...(specs as unknown as ToolDefinition[])];
  const joined: Domain = { ...domain, tools };
  return {
    config,
    discovery,
    domain: joined,
    registry: registryOf(tools),
    allow: [...input.allow, ...specs.map((spec) => spec.name)],
    names: mcpToolNames(config, discovery),
  };
}
