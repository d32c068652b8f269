// What the refund tool needs from the refunds service (the system of record), as types:
// backend/refunds/ implements it on SQLite (the embedded default, service.ts) and on PostgreSQL
// (a ledger shared by every worker, postgres.ts). Asynchronous, so both backends fit. Effect record states:
//   planned    the request is recorded; no money has moved yet
//   ambiguous  an attempt ended without reporting its outcome (it timed out or its worker died);
//              the next attempt reconciles it here before acting
//   confirmed  the refund was made (terminal)
//   rejected   the service refused it (terminal), with a rejection reason

export type EffectState = 'planned' | 'confirmed' | 'ambiguous' | 'rejected';

export interface RefundRecord {
  id: number;
  idempotency_key: string;
  workflow_id: string;
  user_id: number;
  amount_usd: number;
  currency: string;
  reason: string;
  state: EffectState;
  /** Why the service refused the refund (state rejected). */
  rejection: string | null;
  /** Fencing token: raised by every claim; only the latest claimant may settle the record. */
  fence: number;
  created_at: string;
  updated_at: string;
  confirmed_at: string | null;
  /**
   * When the attempt that settled the record asked the server whether its run's cancel was recorded
   * (the answer was no). The commit follows that check by a few milliseconds: a cancel recorded in
   * between does not undo it, and the run then reports the refund as made. Null before settling.
   */
  cancel_checked_at: string | null;
}

export interface PlanRequest {
  idempotency_key: string;
  workflow_id: string;
  user_id: number;
  amount_usd: number;
  reason: string;
}

export interface ConfirmRequest {
  idempotency_key: string;
  /** The token plan() or claim() handed out. */
  fence: number;
  /** What the billing record says the user paid; undefined when there is no billing record. */
  paid_usd: number | undefined;
  /** When the run's cancel flag was asked of the server just before this commit (ISO time); recorded with the outcome. */
  cancel_checked_at?: string;
}

/** The ledger's backend: a retry compares its own with the one the earlier attempt used (issue_refund). */
export type LedgerKind = 'sqlite' | 'postgresql';

export interface RefundLedger {
  readonly kind: LedgerKind;
  lookupByKey(key: string): Promise<RefundRecord | undefined>;
  plan(request: PlanRequest): Promise<{ created: boolean; record: RefundRecord }>;
  /** Takes over an unfinished record (raising its fence); undefined when there is none. */
  claim(key: string): Promise<RefundRecord | undefined>;
  /** Confirms or rejects a held record, once, under the service's own rules; throws FencedError when stale. */
  confirm(request: ConfirmRequest): Promise<RefundRecord>;
  /** Closes an unfinished record as not made (rejection VOIDED), fencing off a hung attempt; returns the record. */
  settle(key: string): Promise<RefundRecord | undefined>;
}

/**
 * The rejection recorded when a record nobody will finish is settled as not made (settle()): its
 * run ended (cancel, deadline, failure) before the refund was committed.
 */
export const VOIDED = 'voided';
