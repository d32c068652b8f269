// The principal-aware policy gate. A run belongs to one principal (AgentInput.user_id); this
// decides whether a schema-valid tool call is within what that principal may have done for them.
// Pure and deterministic: the facts come from the run's own history (observations the workflow
// recorded from its activities), never from numbers the model wrote into its arguments.
import { z } from 'zod';
import { REFUND_POLICY } from './refund-policy';
import type { RefundPolicy } from './refund-policy';
import type { HistoryEntry } from '../common/types';

/** Every rule the gate enforces; a denial ends the run with `policy_denied:<rule>`. */
export const POLICY_RULES = {
  other_user: "the call is about another user than the run's principal (any tool with a user_id argument)",
  refund_without_billing: "a refund before this run has read the principal's billing record (get_user_billing)",
  refund_currency: "the billing record is not in the refund policy's currency",
  refund_plan_not_refundable: "the principal's plan has no refund window in the refund policy",
  refund_outside_window: "the first payment is older than the plan's refund window",
  refund_exceeds_paid:
    'the amount, plus refunds already confirmed in this run, is more than the billing record shows was paid',
} as const;
export type PolicyRule = keyof typeof POLICY_RULES;

export type PolicyDecision = { allowed: true } | { allowed: false; rule: PolicyRule };

/** The part of a billing observation the gate relies on. */
export interface BillingFact {
  currency: string;
  plan: string;
  price_usd: number;
  days_since_first_payment: number;
  /** When the run observed it (absent in histories recorded before facts aged). */
  observed_at_ms?: number;
}

/**
 * Whole days since the first payment. Without a clock, the number as observed (the window is
 * inclusive: 14 is inside a 14-day window). With one, the days that passed since the observation
 * are added first, so a fact read 8 s before its day ends is outside after a 10 s approval wait.
 */
function ageInDays(billing: BillingFact, nowMs: number | undefined): number {
  if (nowMs === undefined || billing.observed_at_ms === undefined) return billing.days_since_first_payment;
  return Math.floor(billing.days_since_first_payment + Math.max(0, nowMs - billing.observed_at_ms) / DAY_MS);
}

export interface PolicyContext {
  principalUserId: number;
  /** The run's history so far: the only source of facts. */
  history: readonly HistoryEntry[];
  refundPolicy?: RefundPolicy;
  /**
   * Workflow time now. With it, a billing fact ages from when it was observed (observed_at_ms), so
   * a refund approved after a long wait is checked against the window as it is at that moment.
   */
  nowMs?: number;
  /** USD this run has refunded for sure (from its effects); default: summed from the history. */
  confirmedRefundsUsd?: number;
}

const DAY_MS = 86_400_000;

/** Tools whose effect moves money, and so need facts from the billing record. */
export const REFUND_TOOLS: readonly string[] = ['issue_refund'];

const ALLOWED: PolicyDecision = { allowed: true };
const deny = (rule: PolicyRule): PolicyDecision => ({ allowed: false, rule });

/** `args` are the schema-validated arguments (the gateway checks the schema first). */
export function checkPrincipalPolicy(tool: string, args: Record<string, unknown>, ctx: PolicyContext): PolicyDecision {
  if ('user_id' in args && args.user_id !== ctx.principalUserId) return deny('other_user');
  if (!REFUND_TOOLS.includes(tool)) return ALLOWED;

  const policy = ctx.refundPolicy ?? REFUND_POLICY;
  const billing = billingFact(ctx.history, ctx.principalUserId);
  if (!billing) return deny('refund_without_billing');
  if (billing.currency !== policy.currency) return deny('refund_currency');
  const windowDays = Object.prototype.hasOwnProperty.call(policy.refundable_days_by_plan, billing.plan)
    ? policy.refundable_days_by_plan[billing.plan]
    : undefined;
  if (windowDays === undefined) return deny('refund_plan_not_refundable');
  if (ageInDays(billing, ctx.nowMs) > windowDays) return deny('refund_outside_window');

  const amountCents = cents(Number(args.amount_usd));
  const refunded = ctx.confirmedRefundsUsd ?? confirmedRefundsUsd(ctx.history);
  if (amountCents + cents(refunded) > cents(billing.price_usd)) return deny('refund_exceeds_paid');
  return ALLOWED;
}

const billingSchema = z.object({
  billing: z.object({
    currency: z.string(),
    plan: z.string(),
    price_usd: z.number().finite().nonnegative(),
    days_since_first_payment: z.number().finite().nonnegative(),
  }),
});

/** The latest successful, untruncated billing observation this run made for `userId`. */
export function billingFact(history: readonly HistoryEntry[], userId: number): BillingFact | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const { action, observation, observed_at_ms } = history[i]!;
    if (action.kind !== 'tool' || action.name !== 'get_user_billing' || action.args.user_id !== userId) continue;
    if (observation.tool !== 'get_user_billing' || !observation.ok || observation.truncated) continue;
    const parsed = billingSchema.safeParse(observation.data);
    if (parsed.success) return { ...parsed.data.billing, ...(observed_at_ms !== undefined ? { observed_at_ms } : {}) };
  }
  return undefined;
}

const refundSchema = z.object({ refund: z.object({ amount_usd: z.number().finite(), state: z.literal('confirmed') }) });

/** USD already refunded by this run (confirmed issue_refund observations). */
export function confirmedRefundsUsd(history: readonly HistoryEntry[]): number {
  let total = 0;
  for (const { action, observation } of history) {
    if (action.kind !== 'tool' || !REFUND_TOOLS.includes(action.name) || !observation.ok) continue;
    const parsed = refundSchema.safeParse(observation.data);
    if (parsed.success) total += parsed.data.refund.amount_usd;
  }
  return total;
}

function cents(usd: number): number {
  return Math.round(usd * 100);
}
