// The `issue_refund` tool: the first activity with a real side effect. The workflow computes the
// idempotency key and passes it in; this activity asks the refunds service for that key FIRST, so
// an attempt that follows a timeout or a dead worker reconciles against the system of record
// instead of repeating the refund. A run never refunds twice.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { Observation, ToolInput } from '../../workflows/types';
import { envelope } from '../envelope';
import type { DataSource } from '../tools/data-source';
import type { RefundRecord, RefundService } from './service';
import { RefundService as Service, refundsDbPathFromEnv } from './service';

export const REFUND_SOURCE = 'refunds-service';
const HEARTBEAT_EVERY_MS = 250;

export interface RefundFaults {
  /**
   * Fault injection, for tests: on an effect's first attempt, after the refund is committed,
   * stop heartbeating and wait this long before reporting back, as a worker that hangs or dies
   * right after the effect would. 0 (the default) turns it off.
   */
  pauseAfterCommitMs: number;
}

export function refundFaultsFromEnv(env: NodeJS.ProcessEnv = process.env): RefundFaults {
  const raw = env.AGENT_REFUND_PAUSE_AFTER_COMMIT_MS ?? '0';
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`AGENT_REFUND_PAUSE_AFTER_COMMIT_MS must be a non-negative number, got "${raw}"`);
  return { pauseAfterCommitMs: ms };
}

/** Opens the refunds database on first use, so a worker that never refunds never creates it. */
export function lazyRefundService(file = refundsDbPathFromEnv()): () => RefundService {
  let service: RefundService | undefined;
  return () => (service ??= Service.open(file));
}

export interface IssueRefundDeps {
  refunds: () => RefundService;
  data: DataSource;
  faults?: RefundFaults;
}

export function createIssueRefund(deps: IssueRefundDeps) {
  const faults = deps.faults ?? { pauseAfterCommitMs: 0 };

  return async function issue_refund(input: ToolInput): Promise<Observation> {
    const ctx = Context.current();
    const { attempt, workflowExecution } = ctx.info;
    const key = input.idempotency_key;
    const args = readArgs(input.args);

    // Object-level authorisation at the tool as well as in the workflow's gate: this activity
    // refunds only the run's principal.
    if (args.user_id !== input.principal_user_id) {
      return envelope('issue_refund', REFUND_SOURCE, false, { rejected: 'not_principal', user_id: args.user_id });
    }

    let stage = 'reconciling';
    const beat = setInterval(() => ctx.heartbeat({ key, stage }), HEARTBEAT_EVERY_MS);
    const stopIfCancelled = () => {
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new CancelledFailure('cancelled');
    };
    try {
      const refunds = deps.refunds();
      // 1. Reconcile by key before anything else: an earlier attempt (or an earlier run with the
      //    same workflow id) may already have acted.
      const existing = refunds.lookupByKey(key);
      if (existing?.state === 'confirmed' || existing?.state === 'rejected') return outcome(existing, true);
      let held: RefundRecord | undefined;
      if (existing) {
        // planned or ambiguous: an attempt ended without reporting. Claim the record (fencing
        // the old attempt off) and settle it below; the service's confirm is keyed and atomic, so
        // settling it now cannot make a second refund.
        held = refunds.claim(key);
      } else {
        stopIfCancelled();
        stage = 'planning';
        const planned = refunds.plan({
          idempotency_key: key,
          workflow_id: workflowExecution?.workflowId ?? '',
          user_id: args.user_id,
          amount_usd: args.amount_usd,
          reason: args.reason,
        });
        // Another attempt planned it between our lookup and our insert: claim it instead.
        held = planned.created ? planned.record : refunds.claim(key);
      }
      if (!held) throw new Error(`refund ${key} vanished from the refunds service`);
      if (held.state === 'confirmed' || held.state === 'rejected') return outcome(held, true);

      // 2. The effect: confirmed or rejected exactly once, by the service, under its own rules.
      stopIfCancelled();
      stage = 'confirming';
      const paid = (await deps.data()).billing[String(args.user_id)]?.price_usd;
      const record = refunds.confirm({ idempotency_key: key, fence: held.fence, paid_usd: paid });
      stage = 'committed';

      if (faults.pauseAfterCommitMs > 0 && attempt === 1) {
        clearInterval(beat); // a hung worker sends no heartbeats
        await new Promise((resolve) => setTimeout(resolve, faults.pauseAfterCommitMs));
      }
      return outcome(record, existing !== undefined);
    } catch (err) {
      if (err instanceof Error && err.name === 'FencedError') {
        // A newer attempt owns the record; this one reports nothing new and lets it finish.
        throw ApplicationFailure.retryable(err.message, 'RefundFenced');
      }
      throw err;
    } finally {
      clearInterval(beat);
    }
  };
}

function readArgs(args: Record<string, unknown>): { user_id: number; amount_usd: number; reason: string } {
  const { user_id, amount_usd, reason } = args;
  if (!Number.isInteger(user_id) || typeof amount_usd !== 'number' || !(amount_usd > 0) || typeof reason !== 'string') {
    // The workflow's gate checks the schema first; reaching this is a bug, not a retryable outage.
    throw ApplicationFailure.nonRetryable('issue_refund: malformed arguments', 'RefundBadArgs');
  }
  return { user_id: user_id as number, amount_usd, reason };
}

function outcome(record: RefundRecord, reconciled: boolean): Observation {
  const refund = {
    refund_id: record.id,
    user_id: record.user_id,
    amount_usd: record.amount_usd,
    currency: record.currency,
    state: record.state,
    reason: record.reason,
  };
  return envelope('issue_refund', REFUND_SOURCE, record.state === 'confirmed', {
    refund,
    idempotency_key: record.idempotency_key,
    // True when this attempt found the effect already decided (or interrupted) by key.
    reconciled,
    ...(record.state === 'rejected' ? { rejected: record.rejection } : {}),
  });
}
