// The refund policy as data: what the principal gate enforces and what an operator can read.
// It mirrors the policy documents the model can search (refund-v3, free-v1, billing-v2); the
// model's reading of them is never what authorises a refund, this table is.

export interface RefundPolicy {
  /** Which policy document this table implements. */
  version: string;
  /** Refunds are paid in this currency only (billing-v2). */
  currency: string;
  /**
   * Plan -> days after the first payment within which a refund is allowed (inclusive).
   * A plan that is not listed is not refundable (free-v1: the free plan has nothing to refund).
   */
  refundable_days_by_plan: Readonly<Record<string, number>>;
}

export const REFUND_POLICY: RefundPolicy = {
  version: 'refund-v3',
  currency: 'USD',
  refundable_days_by_plan: {
    pro_monthly: 14,
  },
};
