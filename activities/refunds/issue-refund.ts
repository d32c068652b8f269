// The `issue_refund` tool: the first activity with a real side effect. The workflow computes the
// idempotency key and passes it in; this activity asks the refunds service for that key FIRST, so
// an attempt that follows a timeout or a dead worker reconciles against the system of record
// instead of repeating the refund. A run never refunds twice.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { Observation, ToolInput } from '../../common/types';
import { envelope } from '../envelope';
import type { DataSource } from '../tools/data-source';
import type { RefundRecord, RefundService } from './service';
import { RefundService as Service, refundsDbPathFromEnv } from './service';

export const REFUND_SOURCE = 'refunds-service';
const HEARTBEAT_EVERY_MS = 250;

/**
 * Fault injection, for tests and drills. On an effect's first attempt the activity stops
 * heartbeating and waits this long, as a worker that hangs (or is killed) at that point would;
 * Temporal then times the attempt out and the next attempt must reconcile. 0 (default) = off.
 */
export interface RefundFaults {
  /** After the refund is planned, before it is committed ("timeout before commit"). */
  pauseBeforeCommitMs: number;
  /** After the refund is committed, before the activity reports back ("timeout after commit"). */
  pauseAfterCommitMs: number;
}

export const NO_FAULTS: RefundFaults = { pauseBeforeCommitMs: 0, pauseAfterCommitMs: 0 };

export function refundFaultsFromEnv(env: NodeJS.ProcessEnv = process.env): RefundFaults {
  const ms = (name: string): number => {
    const raw = env[name] ?? '0';
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0)
      throw new Error(`${name} must be a non-negative number of milliseconds, got "${raw}"`);
    return n;
  };
  return {
    pauseBeforeCommitMs: ms('AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS'),
    pauseAfterCommitMs: ms('AGENT_REFUND_PAUSE_AFTER_COMMIT_MS'),
  };
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

/** The error type of an attempt that found its run cancelled before it committed the refund. */
export const RUN_CANCELLED_BEFORE_COMMIT = 'RunCancelledBeforeCommit';

/**
 * Reads the run's own cancel flag from the server. The workflow learns of a cancel only when it
 * runs its next workflow task, which a hung worker can delay by tens of seconds; meanwhile Temporal
 * may retry a timed-out refund attempt on a healthy worker. Asking the server stops that attempt
 * from moving money after the operator pulled the kill switch.
 */
async function cancelRequestedOnServer(workflowId: string, runId: string): Promise<boolean> {
  const { client } = Context.current();
  const description = await client.workflowService.describeWorkflowExecution({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
  });
  return description.workflowExtendedInfo?.cancelRequested === true;
}

export function createIssueRefund(deps: IssueRefundDeps) {
  const faults = deps.faults ?? NO_FAULTS;

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
    const stall = async (ms: number) => {
      if (ms <= 0 || attempt !== 1) return;
      clearInterval(beat); // a hung worker sends no heartbeats
      await sleepUnlessAborted(ms, ctx.cancellationSignal); // worker shutdown still ends it
    };
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

      await stall(faults.pauseBeforeCommitMs);

      // 2. The effect: confirmed or rejected exactly once, by the service, under its own rules;
      //    never once the run's cancel is recorded (the workflow then settles the record as not made).
      stopIfCancelled();
      stage = 'checking the run';
      if (workflowExecution && (await cancelRequestedOnServer(workflowExecution.workflowId, workflowExecution.runId))) {
        throw ApplicationFailure.nonRetryable(
          `refund ${key} not committed: the run's cancel is recorded`,
          RUN_CANCELLED_BEFORE_COMMIT,
        );
      }
      stage = 'confirming';
      const paid = (await deps.data()).billing[String(args.user_id)]?.price_usd;
      const record = refunds.confirm({ idempotency_key: key, fence: held.fence, paid_usd: paid });
      stage = 'committed';

      await stall(faults.pauseAfterCommitMs);
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

function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
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
