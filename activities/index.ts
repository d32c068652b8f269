// The activities a worker registers: `decide`, one activity per tool of the wired domain
// (domains/wired.ts, under the tool's name, so the Web UI's event list reads like the trace) and
// `reconcile_<tool>` for each tool with a reconcile hook. The support domain's services are built
// here: its data (a file or the built-in data) and its refunds service (PostgreSQL or SQLite).
import type { EffectFaults, ToolDefinition } from '../common/tools/tool-catalog';
import type { SupportServices } from '../domains/support/index';
import { supportDomain } from '../domains/support/index';
import { readEnv } from '../runtime/env-vars';
import type { LlmConfig } from './decide/llm-config';
import { createDecide, createLlmPricing } from './decide/decide';
import type { LlmLimiter } from './limiter/llm-lease';
import type { DataSource } from '../domains/support/backend/data-source';
import type { RefundStore } from '../domains/support/backend/refunds/rules';
import { lazyRefundService } from '../domains/support/backend/refunds/open';
import { withObservationLog } from './tools/observation-log';
import { withToolPause } from './tools/drill';
import { ownerActivity, reconcileActivity, toolActivity } from './tools/tool-activity';
import type { OwnerFn, ReconcileFn, ToolDeps, ToolFn } from './tools/tool-activity';
import type { RetailServices } from '../domains/retail/pack';
import { retailDomain } from '../domains/retail/pack';
import type { RetailRecords } from '../domains/retail/services';
import { lazyRetailStore } from '../domains/retail/backend/open';
import { mcpActivities } from './mcp/index';

export interface ActivityDeps {
  llm: LlmConfig;
  data: DataSource;
  /** The refunds service; default: AGENT_REFUNDS_DATABASE_URL's PostgreSQL, else the SQLite file AGENT_REFUNDS_DB, opened on first use. */
  refunds?: () => RefundStore;
  /** Fault injection for tests and the eval worker; default: from AGENT_REFUND_PAUSE_{BEFORE,AFTER}_COMMIT_MS (off). */
  refundFaults?: EffectFaults;
  /** The tools to register; default: the support domain's (tests add their own). */
  tools?: readonly ToolDefinition<SupportServices>[];
  /** The fleet-wide LLM rate limit (activities/limiter/llm-lease.ts); none by default. */
  limiter?: LlmLimiter;
  /** The retail domain's databases; default: AGENT_RETAIL_DATABASE_URL's PostgreSQL, else the SQLite file AGENT_RETAIL_DB, opened on first use. */
  retail?: () => RetailRecords;
}

/** The retail domain's tools, and their lookups by key (`reconcile_<tool>`) and of owners (`owner_<tool>`). */
function retailActivities(deps: ToolDeps<RetailServices>) {
  const tools: Record<string, ToolFn> = {};
  const lookups: Record<string, ReconcileFn | OwnerFn> = {};
  for (const tool of retailDomain.tools) {
    tools[tool.name] = toolActivity(tool, deps);
    const reconcile = reconcileActivity(tool, deps.services);
    if (reconcile) lookups[`reconcile_${tool.name}`] = reconcile;
    const owner = ownerActivity(tool, deps.services);
    if (owner) lookups[`owner_${tool.name}`] = owner;
  }
  return { tools, lookups };
}

export function refundFaultsFromEnv(env: NodeJS.ProcessEnv = process.env): EffectFaults {
  return {
    pauseBeforeCommitMs: readEnv('AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS', env),
    pauseAfterCommitMs: readEnv('AGENT_REFUND_PAUSE_AFTER_COMMIT_MS', env),
  };
}

/** Drill: the refunds service does not answer lookups (AGENT_REFUND_LOOKUP_FAIL=1). */
export function refundLookupFailsFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return readEnv('AGENT_REFUND_LOOKUP_FAIL', env);
}

export function createActivities(deps: ActivityDeps) {
  const services: SupportServices = { data: deps.data, refunds: deps.refunds ?? lazyRefundService() };
  const faults = deps.refundFaults ?? refundFaultsFromEnv();
  const toolDeps = { services, faults };
  const domainTools = deps.tools ?? supportDomain.tools;
  const retail = retailActivities({ services: { records: deps.retail ?? lazyRetailStore() }, faults });
  const tools: Record<string, ToolFn> = {
    ...Object.fromEntries(domainTools.map((tool) => [tool.name, toolActivity(tool, toolDeps)])),
    ...retail.tools,
  };
  const lookupFails = refundLookupFailsFromEnv();
  // Named reconcile_<tool>: the lookup a run makes before it ends with an effect's outcome unknown.
  const reconciles: Record<string, ReconcileFn> = {};
  for (const tool of domainTools) {
    const reconcile = reconcileActivity(tool, services, lookupFails);
    if (reconcile) reconciles[`reconcile_${tool.name}`] = reconcile;
  }
  return {
    // MCP servers' tools (`<server>.<tool>`, the dynamic activity) and their discovery.
    ...mcpActivities(),
    ...retail.lookups,
    decide: createDecide(deps.llm, deps.limiter),
    // A local activity: the model's price, recorded once by a run with a dollar budget.
    llm_pricing: createLlmPricing(deps.llm),
    ...reconciles,
    // Every tool's result is logged as the model sees it (sensitive fields redacted).
    // withToolPause: the AGENT_TOOL_PAUSE_MS drill (slow read-only tools); a no-op unless set.
    ...withObservationLog(withToolPause(tools)),
  };
}
