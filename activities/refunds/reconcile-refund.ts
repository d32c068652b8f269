// `reconcile_issue_refund`: what the workflow asks before a run ends while a refund's outcome is
// unknown (the call was cut off by a cancel or a deadline, or failed for good). A lookup by the
// call's idempotency key in the system of record, short and never cancelled. With `settle`, an
// unfinished record is closed as not made, so the answer is final: a hung attempt that wakes up
// later finds it settled and cannot confirm it.
import { ApplicationFailure } from '@temporalio/activity';
import type { ReconcileInput, ReconcileOutput } from '../../common/types';
import type { RefundRecord, RefundService } from './service';
import { VOIDED } from './service';
import { readEnv } from '../../runtime/env-vars';

export interface ReconcileDeps {
  refunds: () => RefundService;
  /** Drill: the refunds service does not answer lookups (AGENT_REFUND_LOOKUP_FAIL=1). */
  lookupFails?: boolean;
}

export function refundLookupFailsFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return readEnv('AGENT_REFUND_LOOKUP_FAIL', env);
}

export function createReconcileIssueRefund(deps: ReconcileDeps) {
  return async function reconcile_issue_refund(input: ReconcileInput): Promise<ReconcileOutput> {
    // Non-retryable so a drill shows the ambiguous outcome at once instead of after the retry window.
    if (deps.lookupFails)
      throw ApplicationFailure.nonRetryable(
        'refunds service refused the lookup (drill: AGENT_REFUND_LOOKUP_FAIL)',
        'RefundLookupFailed',
      );
    const refunds = deps.refunds();
    const record = input.settle ? refunds.settle(input.idempotency_key) : refunds.lookupByKey(input.idempotency_key);
    return record
      ? outcomeOf(record)
      : { state: 'not_made', detail: 'no record with this key: the call never reached the refunds service' };
  };
}

function outcomeOf(record: RefundRecord): ReconcileOutput {
  const base = { amount_usd: record.amount_usd, refund_id: record.id };
  switch (record.state) {
    case 'confirmed':
      return { ...base, state: 'confirmed' };
    case 'rejected':
      return record.rejection === VOIDED
        ? { ...base, state: 'not_made', detail: 'voided: the run ended before the refund was committed' }
        : { ...base, state: 'rejected', detail: record.rejection ?? 'rejected' };
    default:
      // Without settle, an unfinished record is exactly what an operator must look at.
      return { ...base, state: 'ambiguous', detail: `record ${record.state}: an attempt has not finished` };
  }
}
