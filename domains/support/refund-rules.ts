// The refund tool's policy hook: whether a schema-valid refund is within what the refund policy
// allows the run's principal. Pure and deterministic (it runs in the workflow): the facts come from
// the run's own history (observations the workflow recorded from its activities), never from
// numbers the model wrote into its arguments.
import { z } from 'zod';
import type { PolicyContext, PolicyDecision, ToolPolicy } from '../../common/tools/tool';
import type { HistoryEntry } from '../../common/types';
import { REFUND_POLICY } from './refund-policy';
import type { RefundPolicy } from './refund-policy';

/** Every rule the refund hook enforces; a denial ends the run with `policy_denied:<rule>`. */
export const REFUND_RULES = {
  refund_without_billing: "a refund before this run has read the principal's billing record (get_user_billing)",
  refund_currency: "the billing record is not in the refund policy's currency",
  refund_plan_not_refundable: "the principal's plan has no refund window in the refund policy",
  refund_outside_window: "the first payment is older than the plan's refund window",
  refund_exceeds_paid:
    'the amount, plus refunds already confirmed in this run, is more than the billing record shows was paid',
} as const;
export type RefundRule = keyof typeof REFUND_RULES;

/** The part of a billing observation the hook relies on. */
export interface BillingFact {
  currency: string;
  plan: string;
  price_usd: number;
  days_since_first_payment: number;
  /** When the run observed it (absent in histories recorded before facts aged). */
  observed_at_ms?: number;
}

const DAY_MS = 86_400_000;
const BILLING_TOOL = 'get_user_billing';
const REFUND_TOOL = 'issue_refund';

/**
 * Whole days since the first payment. Without a clock, the number as observed (the window is
 * inclusive: 14 is inside a 14-day window). With one, the days that passed since the observation
 * are added first, so a fact read 8 s before its day ends is outside after a 10 s approval wait.
 */
function ageInDays(billing: BillingFact, nowMs: number | undefined): number {
  if (nowMs === undefined || billing.observed_at_ms === undefined) return billing.days_since_first_payment;
  return Math.floor(billing.days_since_first_payment + Math.max(0, nowMs - billing.observed_at_ms) / DAY_MS);
}

const ALLOWED: PolicyDecision = { allowed: true };
const deny = (rule: RefundRule): PolicyDecision => ({ allowed: false, rule });

/** The hook for a given policy table (tests pass their own; the tool uses REFUND_POLICY). */
export function refundRulesFor(policy: RefundPolicy): ToolPolicy {
  return (args: Record<string, unknown>, ctx: PolicyContext): PolicyDecision => {
    if (ctx.principal === undefined) return deny('refund_without_billing');
    const billing = billingFact(ctx.history, ctx.principal);
    if (!billing) return deny('refund_without_billing');
    if (billing.currency !== policy.currency) return deny('refund_currency');
    const windowDays = Object.prototype.hasOwnProperty.call(policy.refundable_days_by_plan, billing.plan)
      ? policy.refundable_days_by_plan[billing.plan]
      : undefined;
    if (windowDays === undefined) return deny('refund_plan_not_refundable');
    if (ageInDays(billing, ctx.nowMs) > windowDays) return deny('refund_outside_window');

    const amountCents = cents(Number(args.amount_usd));
    const refunded = ctx.confirmedUsd ?? confirmedRefundsUsd(ctx.history);
    if (amountCents + cents(refunded) > cents(billing.price_usd)) return deny('refund_exceeds_paid');
    return ALLOWED;
  };
}

export const refundRules: ToolPolicy = refundRulesFor(REFUND_POLICY);

const billingSchema = z.object({
  billing: z.object({
    currency: z.string(),
    plan: z.string(),
    price_usd: z.number().finite().nonnegative(),
    days_since_first_payment: z.number().finite().nonnegative(),
  }),
});

/** The latest successful, untruncated billing observation this run made for `principal`. */
export function billingFact(history: readonly HistoryEntry[], principal: string): BillingFact | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const { action, observation, observed_at_ms } = history[i]!;
    if (action.kind !== 'tool' || action.name !== BILLING_TOOL || String(action.args.user_id) !== principal) continue;
    if (observation.tool !== BILLING_TOOL || !observation.ok || observation.truncated) continue;
    const parsed = billingSchema.safeParse(observation.data);
    if (parsed.success) return { ...parsed.data.billing, ...(observed_at_ms !== undefined ? { observed_at_ms } : {}) };
  }
  return undefined;
}

const refundSchema = z.object({ refund: z.object({ amount_usd: z.number().finite(), state: z.literal('confirmed') }) });

/** USD already refunded by this run (confirmed refund observations). */
export function confirmedRefundsUsd(history: readonly HistoryEntry[]): number {
  let total = 0;
  for (const { action, observation } of history) {
    if (action.kind !== 'tool' || action.name !== REFUND_TOOL || !observation.ok) continue;
    const parsed = refundSchema.safeParse(observation.data);
    if (parsed.success) total += parsed.data.refund.amount_usd;
  }
  return total;
}

function cents(usd: number): number {
  return Math.round(usd * 100);
}
