// The `issue_refund` tool: the first tool with a real side effect. The workflow computes the
// idempotency key and passes it in; the handler asks the refunds service for that key FIRST, so
// an attempt that follows a timeout or a dead worker reconciles against the system of record
// instead of repeating the refund. A run never refunds twice.
import { z } from 'zod';
import type { Observation } from '../../../common/tools/observation';
import type { ToolContext } from '../../../common/tools/tool';
import { reconcileRefund } from '../reconcile-refund';
import type { LedgerKind, RefundRecord } from '../refund-ledger';
import { refundRules } from '../refund-rules';
import type { SupportServices } from '../services';
import { defineSupportTool, FOR_PRINCIPAL, userId } from './args';

export const REFUND_SOURCE = 'refunds-service';

/** The error type of an attempt that found its run cancelled before it committed the refund. */
export const RUN_CANCELLED_BEFORE_COMMIT = 'RunCancelledBeforeCommit';

/** The error type of an attempt refused because its ledger is not the one an earlier attempt used. */
export const REFUND_LEDGER_MISMATCH = 'RefundLedgerMismatch';

/** A positive USD amount in whole cents, at most 10,000. */
const amountUsd = z
  .number()
  .positive()
  .max(10_000)
  .refine((n) => Math.abs(n * 100 - Math.round(n * 100)) < 1e-6, 'at most two decimals')
  .describe('USD, at most two decimals');

export const issueRefund = defineSupportTool({
  name: 'issue_refund',
  description:
    "Refund the user: sends money back to the original payment method. Needs an operator's approval; " +
    'only for the user the run is for, after reading their billing record, within the refund policy, at most what was paid.',
  args: z.strictObject({ user_id: userId, amount_usd: amountUsd, reason: z.string().trim().min(3).max(500) }),
  timeoutSeconds: 30,
  // Safe to retry: every attempt reconciles by idempotency key before it acts.
  maxAttempts: 5,
  effectful: true,
  needsApproval: true,
  freeText: ['reason'],
  ...FOR_PRINCIPAL,
  policy: refundRules,
  // The answer repeats the amount refunded: it must be one an observation shows.
  statesFacts: true,
  reconcile: reconcileRefund,
  async handler(args, ctx, input) {
    const key = input.idempotency_key;
    // Object-level authorisation at the tool as well as in the workflow's gate: this tool
    // refunds only the run's principal.
    if (String(args.user_id) !== input.principal) {
      return ctx.envelope(REFUND_SOURCE, false, { rejected: 'not_principal', user_id: args.user_id });
    }

    const refunds = ctx.services.refunds();
    // A retry on a worker whose ledger is of another kind than its predecessor's would look for
    // the key where it never was and could refund twice (a worker started without the fleet's
    // AGENT_REFUNDS_DATABASE_URL): it acts on no ledger and leaves the call to a worker on the right one.
    const earlier = ledgerOf(ctx.earlierHeartbeat);
    if (earlier && earlier !== refunds.kind) {
      throw ctx.failRetryable(
        `refund ${key}: an earlier attempt used a ${earlier} refunds ledger, this worker's is ${refunds.kind}; ` +
          'every worker must use the same ledger (AGENT_REFUNDS_DATABASE_URL)',
        REFUND_LEDGER_MISMATCH,
      );
    }
    let stage = 'reconciling';
    const stopHeartbeats = ctx.startHeartbeats(() => ({ key, stage, ledger: refunds.kind }));
    const stall = async (ms: number) => {
      if (ms <= 0 || ctx.attempt !== 1) return;
      stopHeartbeats(); // a hung worker sends no heartbeats
      await ctx.stall(ms); // worker shutdown still ends it
    };
    try {
      // 1. Reconcile by key before anything else: an earlier attempt (or an earlier run with the
      //    same workflow id) may already have acted.
      const existing = await refunds.lookupByKey(key);
      if (existing?.state === 'confirmed' || existing?.state === 'rejected') return outcome(ctx, existing, true);
      let held: RefundRecord | undefined;
      // Whether this attempt took over a record another attempt (or run) made.
      let reconciled = existing !== undefined;
      if (existing) {
        // planned or ambiguous: an attempt ended without reporting. Claim the record (fencing
        // the old attempt off) and settle it below; the service's confirm is keyed and atomic, so
        // settling it now cannot make a second refund.
        held = await refunds.claim(key);
      } else {
        ctx.throwIfCancelled();
        stage = 'planning';
        const planned = await refunds.plan({
          idempotency_key: key,
          workflow_id: ctx.workflowId,
          user_id: args.user_id,
          amount_usd: args.amount_usd,
          reason: args.reason,
        });
        // Another attempt planned it between our lookup and our insert: claim it instead.
        held = planned.created ? planned.record : await refunds.claim(key);
        reconciled = !planned.created;
      }
      if (!held) throw new Error(`refund ${key} vanished from the refunds service`);
      if (held.state === 'confirmed' || held.state === 'rejected') return outcome(ctx, held, true);

      await stall(ctx.faults.pauseBeforeCommitMs);

      // 2. The effect: confirmed or rejected exactly once, by the service, under its own rules;
      //    never once the run's cancel is recorded (the workflow then settles the record as not made).
      // What the user paid is read first: between the cancel check and the commit nothing else waits.
      const paid = (await ctx.services.data()).billing[String(args.user_id)]?.price_usd;
      ctx.throwIfCancelled();
      stage = 'checking the run';
      const cancelCheckedAt = new Date().toISOString(); // asked from here on: recorded with the outcome
      if (await ctx.runCancelRequested()) {
        throw ctx.failForGood(`refund ${key} not committed: the run's cancel is recorded`, RUN_CANCELLED_BEFORE_COMMIT);
      }
      stage = 'confirming';
      const record = await refunds.confirm({
        idempotency_key: key,
        fence: held.fence,
        paid_usd: paid,
        cancel_checked_at: cancelCheckedAt,
      });
      stage = 'committed';

      await stall(ctx.faults.pauseAfterCommitMs);
      return outcome(ctx, record, reconciled);
    } catch (err) {
      if (err instanceof Error && err.name === 'FencedError') {
        // A newer attempt owns the record; this one reports nothing new and lets it finish.
        throw ctx.failRetryable(err.message, 'RefundFenced');
      }
      throw err;
    } finally {
      stopHeartbeats();
    }
  },
});

/** The ledger kind an earlier attempt's heartbeat names (none from attempts before ledgers were named). */
function ledgerOf(details: unknown): LedgerKind | undefined {
  const ledger = (details as { ledger?: unknown } | undefined)?.ledger;
  return ledger === 'sqlite' || ledger === 'postgresql' ? ledger : undefined;
}

function outcome(ctx: ToolContext<SupportServices>, record: RefundRecord, reconciled: boolean): Observation {
  const refund = {
    refund_id: record.id,
    user_id: record.user_id,
    amount_usd: record.amount_usd,
    currency: record.currency,
    state: record.state,
    reason: record.reason,
  };
  return ctx.envelope(REFUND_SOURCE, record.state === 'confirmed', {
    refund,
    idempotency_key: record.idempotency_key,
    // True when this attempt found the effect already decided (or interrupted) by key.
    reconciled,
    ...(record.state === 'rejected' ? { rejected: record.rejection } : {}),
  });
}
