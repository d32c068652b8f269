// The activities a worker registers: `decide`, one activity per tool (common/tools/, under the
// tool's name, so the Web UI's event list reads like the trace) and the reconcile lookups.
import { TOOLS } from '../common/tool-catalog';
import type { RefundFaults } from '../common/tools/refund-ledger';
import type { ToolDefinition } from '../common/tools/tool';
import { readEnv } from '../runtime/env-vars';
import type { LlmConfig } from './llm-config';
import { createDecide, createLlmPricing } from './decide';
import type { LlmLimiter } from './llm-lease';
import type { DataSource } from './tools/data-source';
import { createReconcileIssueRefund, refundLookupFailsFromEnv } from './refunds/reconcile-refund';
import type { RefundService } from './refunds/service';
import { lazyRefundService } from './refunds/service';
import { withObservationLog } from './observation-log';
import { withToolPause } from './tools/drill';
import { evalWorldFromEnv } from './eval-world';
import { toolActivity } from './tools/tool-activity';
import type { ToolFn } from './tools/tool-activity';

export interface ActivityDeps {
  llm: LlmConfig;
  data: DataSource;
  /** The refunds service; default: the SQLite file named by AGENT_REFUNDS_DB, opened on first use. */
  refunds?: () => RefundService;
  /** Fault injection for tests; default: from AGENT_REFUND_PAUSE_{BEFORE,AFTER}_COMMIT_MS (off). */
  refundFaults?: RefundFaults;
  /** The tools to register; default: every tool in common/tools/index.ts (tests add their own). */
  tools?: readonly ToolDefinition[];
  /** The fleet-wide LLM rate limit (activities/llm-lease.ts); none by default. */
  limiter?: LlmLimiter;
}

export function refundFaultsFromEnv(env: NodeJS.ProcessEnv = process.env): RefundFaults {
  return {
    pauseBeforeCommitMs: readEnv('AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS', env),
    pauseAfterCommitMs: readEnv('AGENT_REFUND_PAUSE_AFTER_COMMIT_MS', env),
  };
}

export function createActivities(deps: ActivityDeps) {
  // npm run eval (AGENT_EVAL_DIR): each run's data, refunds database and faults are its scenario's.
  const world = evalWorldFromEnv();
  const refunds = deps.refunds ?? world?.refunds ?? lazyRefundService();
  const toolDeps = {
    data: world?.data ?? deps.data,
    refunds,
    faults: world?.refundFaults ?? deps.refundFaults ?? refundFaultsFromEnv(),
  };
  const real: Record<string, ToolFn> = Object.fromEntries(
    (deps.tools ?? TOOLS).map((tool) => [tool.name, toolActivity(tool, toolDeps)]),
  );
  const tools = world ? world.wrap(real) : real;
  return {
    decide: createDecide(deps.llm, deps.limiter),
    // A local activity: the model's price, recorded once by a run with a dollar budget.
    llm_pricing: createLlmPricing(deps.llm),
    // Named reconcile_<tool>: the lookup a run makes before it ends with an effect's outcome unknown.
    reconcile_issue_refund: createReconcileIssueRefund({ refunds, lookupFails: refundLookupFailsFromEnv() }),
    // Every tool's result is logged as the model sees it (sensitive fields redacted).
    // withToolPause: the AGENT_TOOL_PAUSE_MS drill (slow read-only tools); a no-op unless set.
    ...withObservationLog(withToolPause(tools)),
  };
}
