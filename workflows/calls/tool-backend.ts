// Where each of a run's tools runs: its domain's activities, or the MCP server that listed it.
// Chosen once per tool when the run's tools are known (after its MCP discovery), so the loop's
// call, owner lookup and reconcile never ask again which kind of tool they have.
import type { Remaining } from '../../common/cost/budget';
import type { McpConfig } from '../../common/mcp/config';
import type { ToolRegistry } from '../../common/tools/tool-catalog';
import type { EffectEntry, Observation } from '../../common/types';
import type { EffectCall } from '../agent/effects';
import type { AdmittedCall } from '../agent/step';
import { ownerMcpActivity } from '../mcp/owner';
import { reconcileMcpActivity } from '../mcp/reconcile';
import { callMcpToolActivity, isMcpTool } from '../mcp/tools';
import type { McpToolSpec } from '../mcp/tools';
import { callToolActivity, ownerActivity, reconcileActivity } from './tool-call';

export interface ToolBackend {
  call(call: AdmittedCall, idempotencyKey: string): Promise<Observation>;
  /** Whom the object the call would change belongs to, or null: no such object. */
  owner(call: AdmittedCall): Promise<string | null>;
  /** The lookup by key of an effect whose call was cut off or failed. */
  reconcile(effect: EffectCall): Promise<EffectEntry>;
}

/** What a call carries of the run, read when it is made: whom it acts for, its store, its budget left. */
export interface ToolCaller {
  stateKey: string;
  principal(): string | undefined;
  store(): string | undefined;
  left(): Remaining;
}

/** Each tool's backend by name; a name the registry lacks goes to the domain's activities. */
export function toolBackends(
  registry: ToolRegistry,
  mcp: McpConfig | undefined,
  run: ToolCaller,
): (name: string) => ToolBackend {
  const domain = domainBackend(run);
  const byName = new Map<string, ToolBackend>();
  for (const [name, spec] of Object.entries(registry))
    byName.set(name, mcp && isMcpTool(spec) ? mcpBackend(spec, mcp, run) : domain);
  return (name) => byName.get(name) ?? domain;
}

function domainBackend(run: ToolCaller): ToolBackend {
  return {
    call: (call, key) => callToolActivity(call, key, run.principal(), run.left(), run.stateKey, run.store()),
    owner: (call) => ownerActivity(call),
    reconcile: (effect) => reconcileActivity(effect, run.store()),
  };
}

function mcpBackend(spec: McpToolSpec, config: McpConfig, run: ToolCaller): ToolBackend {
  return {
    call: (call, key) => callMcpToolActivity(spec, config, call, key, run.principal(), run.left()),
    owner: (call) => ownerMcpActivity(spec, config, call, run.principal()),
    reconcile: (effect) => reconcileMcpActivity(spec, config, effect, run.principal()),
  };
}
