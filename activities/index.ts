// The activities a worker registers. Type names are `decide` and the tool names, so the Web UI's
// event list reads like the trace.
import type { LlmConfig } from './llm-config';
import { createDecide } from './decide';
import type { DataSource } from './tools/data-source';
import { createGetUserProfile } from './tools/profile';
import { createGetUserBilling } from './tools/billing';
import { createSearchPolicy } from './tools/policy';
import { createIssueRefund, lazyRefundService, refundFaultsFromEnv } from './refunds/issue-refund';
import { createReconcileIssueRefund, refundLookupFailsFromEnv } from './refunds/reconcile-refund';
import type { RefundFaults } from './refunds/issue-refund';
import type { RefundService } from './refunds/service';
import { withObservationLog } from './observation-log';
import { withToolPause } from './tools/drill';

export interface ActivityDeps {
  llm: LlmConfig;
  data: DataSource;
  /** The refunds service; default: the SQLite file named by AGENT_REFUNDS_DB, opened on first use. */
  refunds?: () => RefundService;
  /** Fault injection for tests; default: from AGENT_REFUND_PAUSE_{BEFORE,AFTER}_COMMIT_MS (off). */
  refundFaults?: RefundFaults;
}

export function createActivities(deps: ActivityDeps) {
  const refunds = deps.refunds ?? lazyRefundService();
  return {
    decide: createDecide(deps.llm),
    // Named reconcile_<tool>: the lookup a run makes before it ends with an effect's outcome unknown.
    reconcile_issue_refund: createReconcileIssueRefund({ refunds, lookupFails: refundLookupFailsFromEnv() }),
    // Every tool's result is logged as the model sees it (sensitive fields redacted).
    // withToolPause: the AGENT_TOOL_PAUSE_MS drill (slow read-only tools); a no-op unless set.
    ...withObservationLog(
      withToolPause({
        get_user_profile: createGetUserProfile(deps.data),
        get_user_billing: createGetUserBilling(deps.data),
        search_policy: createSearchPolicy(deps.data),
        issue_refund: createIssueRefund({
          refunds,
          data: deps.data,
          faults: deps.refundFaults ?? refundFaultsFromEnv(),
        }),
      }),
    ),
  };
}
