// The activities a worker registers: `decide`, one activity per tool of every registered domain
// (domains/index.ts, under the tool's name, so the Web UI's event list reads like the trace),
// `reconcile_<tool>` for each tool with a reconcile hook and `owner_<tool>` for each with an owner
// hook. Each domain's services come from its backend (domains/backends.ts), in one loop.
import type { Domain } from '../common/domain';
import type { EffectFaults } from '../common/tools/tool-catalog';
import { readEnv } from '../runtime/env-vars';
import { domainBackends } from '../domains/backends';
import type { BackendGiven } from '../domains/backends';
import type { LlmConfig } from './decide/llm-config';
import { createDecide, createLlmPricing } from './decide/decide';
import type { LlmLimiter } from './limiter/llm-lease';
import { withObservationLog } from './tools/observation-log';
import { withToolPause } from './tools/drill';
import { ownerActivity, reconcileActivity, toolActivity } from './tools/tool-activity';
import type { OwnerFn, ReconcileFn, ToolFn } from './tools/tool-activity';
import { mcpActivities } from './mcp/index';

export { refundLookupFailsFromEnv } from '../domains/support/backend/index';

/** The worker's dependencies; a domain's systems of record are opened from the environment unless given (BackendGiven). */
export interface ActivityDeps extends BackendGiven {
  llm: LlmConfig;
  /** Fault injection for tests and the eval worker; default: from AGENT_REFUND_PAUSE_{BEFORE,AFTER}_COMMIT_MS (off). */
  refundFaults?: EffectFaults;
  /** Replaces a registered domain's definition (tests add a tool to one); the domain keeps its backend. */
  domains?: readonly Domain[];
  /** The fleet-wide LLM rate limit (activities/limiter/llm-lease.ts); none by default. */
  limiter?: LlmLimiter;
}

export function refundFaultsFromEnv(env: NodeJS.ProcessEnv = process.env): EffectFaults {
  return {
    pauseBeforeCommitMs: readEnv('AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS', env),
    pauseAfterCommitMs: readEnv('AGENT_REFUND_PAUSE_AFTER_COMMIT_MS', env),
  };
}

/** Every domain's tools, and their lookups by key (`reconcile_<tool>`) and of owners (`owner_<tool>`). */
function domainActivities(deps: ActivityDeps) {
  const faults = deps.refundFaults ?? refundFaultsFromEnv();
  const tools: Record<string, ToolFn> = {};
  const lookups: Record<string, ReconcileFn | OwnerFn> = {};
  for (const backend of domainBackends()) {
    const domain = deps.domains?.find((d) => d.name === backend.domain.name) ?? backend.domain;
    const services = backend.services(deps);
    const lookupFails = backend.lookupFails?.() ?? false;
    for (const tool of domain.tools) {
      tools[tool.name] = toolActivity(tool, { services, faults });
      // Named reconcile_<tool>: the lookup a run makes before it ends with an effect's outcome unknown.
      const reconcile = reconcileActivity(tool, services, lookupFails);
      if (reconcile) lookups[`reconcile_${tool.name}`] = reconcile;
      const owner = ownerActivity(tool, services);
      if (owner) lookups[`owner_${tool.name}`] = owner;
    }
  }
  return { tools, lookups };
}

export function createActivities(deps: ActivityDeps) {
  const { tools, lookups } = domainActivities(deps);
  return {
    // MCP servers' tools (`<server>.<tool>`, the dynamic activity) and their discovery.
    ...mcpActivities(),
    ...lookups,
    decide: createDecide(deps.llm, deps.limiter),
    // A local activity: the model's price, recorded once by a run with a dollar budget.
    llm_pricing: createLlmPricing(deps.llm),
    // Every tool's result is logged as the model sees it (sensitive fields redacted).
    // withToolPause: the AGENT_TOOL_PAUSE_MS drill (slow read-only tools); a no-op unless set.
    ...withObservationLog(withToolPause(tools)),
  };
}
