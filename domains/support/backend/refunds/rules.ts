// What both refunds backends (SQLite and PostgreSQL) share: the service's own rules, the fencing
// error, the amount in cents, and the operator's view of the ledger (list, close) beside the
// refund tool's interface.
import type { EffectState, RefundLedger, RefundRecord } from '../../refund-ledger';

export const EFFECT_STATES: readonly EffectState[] = ['planned', 'confirmed', 'ambiguous', 'rejected'];

/** A stale attempt tried to settle a record that a newer attempt has claimed since. */
export class FencedError extends Error {
  constructor(key: string, fence: number, holder: number) {
    super(`refund ${key}: fence ${fence} is stale (the record is held with fence ${holder})`);
    this.name = 'FencedError';
  }
}

/** The refunds service's own rules: a service refuses what it must never do, whoever asks. */
export const SERVICE_RULES = {
  no_billing_record: 'the user has no billing record',
  nothing_paid: 'the user has paid nothing',
  exceeds_paid: "the user's confirmed refunds, all runs together, would exceed what the user paid",
} as const;
export type ServiceRejection = keyof typeof SERVICE_RULES;

export function toCents(usd: number): number {
  return Math.round(usd * 100);
}

/**
 * The rule a refund of `amountCents` would break, given what the user paid and what is already
 * confirmed for them by other records; undefined when it may be made. The caller must hold the
 * user's refunds still while it asks and acts (one transaction), or two confirms could both pass.
 */
export function ruleBroken(
  amountCents: number,
  paidUsd: number | undefined,
  otherConfirmedCents: number,
): ServiceRejection | undefined {
  if (paidUsd === undefined) return 'no_billing_record';
  const paidCents = toCents(paidUsd);
  if (paidCents <= 0) return 'nothing_paid';
  if (otherConfirmedCents + amountCents > paidCents) return 'exceeds_paid';
  return undefined;
}

export interface RefundFilter {
  user_id?: number;
  workflow_id?: string;
  state?: EffectState;
}

/** A refunds backend as the worker, the operator's tools and the tests hold it. */
export interface RefundStore extends RefundLedger {
  /** Which backend, for messages: `sqlite <file>` or `postgresql <host>/<database>`. */
  readonly describe: string;
  list(filter?: RefundFilter): Promise<RefundRecord[]>;
  close(): Promise<void>;
}
