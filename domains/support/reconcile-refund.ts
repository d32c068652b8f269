// The refund tool's reconcile hook (activity `reconcile_issue_refund`): what the workflow asks
// before a run ends while a refund's outcome is unknown (the call was cut off by a cancel or a
// deadline, or failed for good). A lookup by the call's idempotency key in the system of record,
// short and never cancelled. With `settle`, an unfinished record is closed as not made, so the
// answer is final: a hung attempt that wakes up later finds it settled and cannot confirm it.
import type { ReconcileContext } from '../../common/tools/tool';
import type { ReconcileInput, ReconcileOutput } from '../../common/types';
import type { RefundRecord } from './refund-ledger';
import { VOIDED } from './refund-ledger';
import type { SupportServices } from './services';

export async function reconcileRefund(
  input: ReconcileInput,
  ctx: ReconcileContext<SupportServices>,
): Promise<ReconcileOutput> {
  const refunds = ctx.services.refunds();
  const record = input.settle
    ? await refunds.settle(input.idempotency_key)
    : await refunds.lookupByKey(input.idempotency_key);
  return record
    ? outcomeOf(record)
    : { state: 'not_made', detail: 'no record with this key: the call never reached the refunds service' };
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
