// The principal-aware policy gate (workflows/agent/policy.ts) and its place in the gateway order:
// count -> allowlist -> registry -> args schema -> principal policy -> loop check.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkToolCall } from '../../workflows/agent/gateway';
import type { GatewayContext } from '../../workflows/agent/gateway';
import { checkPrincipalPolicy, PRINCIPAL_RULES } from '../../workflows/agent/policy';
import { billingFact, confirmedRefundsUsd, refundRulesFor } from '../../domains/support/refund-rules';
import { REFUND_POLICY } from '../../domains/support/refund-policy';
import { supportDomain } from '../../domains/support/index';
import { argsHash } from '../../common/tools/hash';
import { registryOfDomain } from '../../domains/index';
import type { HistoryEntry, Observation } from '../../common/types';

const PRINCIPAL = 42;

function obs(tool: string, data: unknown, extra: Partial<Observation> = {}): Observation {
  return { tool, ok: true, data, source: 'test', bytes: JSON.stringify(data).length, truncated: false, ...extra };
}
function billingEntry(
  userId: number,
  billing: Record<string, unknown>,
  extra: Partial<Observation> = {},
): HistoryEntry {
  return {
    step: 1,
    action: { kind: 'tool', name: 'get_user_billing', args: { user_id: userId } },
    observation: obs('get_user_billing', { billing }, extra),
  };
}
const PRO = { currency: 'USD', plan: 'pro_monthly', price_usd: 49, days_since_first_payment: 10 };
const paidPro = [billingEntry(PRINCIPAL, PRO)];
const refund = (amount_usd: number, user_id = PRINCIPAL) => ({
  user_id,
  amount_usd,
  reason: 'customer asked within window',
});

const POLICY_RULES = { ...PRINCIPAL_RULES, ...supportDomain.policyRules };

function rule(tool: string, args: Record<string, unknown>, history: HistoryEntry[]): string {
  const d = checkPrincipalPolicy(registryOfDomain(supportDomain)[tool], args, {
    principal: String(PRINCIPAL),
    history,
  });
  return d.allowed ? 'allowed' : d.rule;
}

describe('principal policy', () => {
  it('allows reads about the principal and calls without a user', () => {
    assert.equal(rule('get_user_profile', { user_id: 42 }, []), 'allowed');
    assert.equal(rule('search_policy', { query: 'refund' }, []), 'allowed');
  });

  it('denies any tool call about another user (other_user)', () => {
    assert.equal(rule('get_user_profile', { user_id: 7 }, []), 'other_user');
    assert.equal(rule('get_user_billing', { user_id: 7 }, paidPro), 'other_user');
    assert.equal(rule('issue_refund', refund(10, 7), paidPro), 'other_user');
  });

  it('allows a refund within the window, up to exactly what was paid', () => {
    assert.equal(rule('issue_refund', refund(49), paidPro), 'allowed');
    assert.equal(rule('issue_refund', refund(0.01), paidPro), 'allowed');
  });

  it('denies a refund of more than the billing record shows was paid, to the cent', () => {
    assert.equal(rule('issue_refund', refund(49.01), paidPro), 'refund_exceeds_paid');
    assert.equal(rule('issue_refund', refund(500), paidPro), 'refund_exceeds_paid');
  });

  it('counts refunds already confirmed in this run', () => {
    const confirmed: HistoryEntry = {
      step: 4,
      action: { kind: 'tool', name: 'issue_refund', args: refund(30) },
      observation: obs('issue_refund', { refund: { amount_usd: 30, state: 'confirmed' } }),
    };
    const rejectedByOperator: HistoryEntry = {
      step: 5,
      action: { kind: 'tool', name: 'issue_refund', args: refund(20) },
      observation: obs('issue_refund', { rejected: 'no' }, { ok: false, source: 'operator' }),
    };
    const history = [...paidPro, confirmed, rejectedByOperator];
    assert.equal(confirmedRefundsUsd(history), 30);
    assert.equal(rule('issue_refund', refund(19), history), 'allowed');
    assert.equal(rule('issue_refund', refund(19.01), history), 'refund_exceeds_paid');
  });

  it('denies a refund before the billing record was read in this run (never the model number)', () => {
    assert.equal(rule('issue_refund', refund(1), []), 'refund_without_billing');
    // Another user's billing, a failed read or a truncated observation are no facts about the principal.
    assert.equal(rule('issue_refund', refund(1), [billingEntry(7, PRO)]), 'refund_without_billing');
    assert.equal(
      rule('issue_refund', refund(1), [billingEntry(PRINCIPAL, PRO, { ok: false })]),
      'refund_without_billing',
    );
    assert.equal(
      rule('issue_refund', refund(1), [billingEntry(PRINCIPAL, PRO, { truncated: true })]),
      'refund_without_billing',
    );
    assert.equal(
      rule('issue_refund', refund(1), [billingEntry(PRINCIPAL, { plan: 'pro_monthly', price_usd: '49' })]),
      'refund_without_billing',
    );
  });

  it('uses the latest billing observation', () => {
    const history = [billingEntry(PRINCIPAL, { ...PRO, price_usd: 99 }), billingEntry(PRINCIPAL, PRO)];
    assert.equal(billingFact(history, String(PRINCIPAL))?.price_usd, 49);
    assert.equal(rule('issue_refund', refund(50), history), 'refund_exceeds_paid');
  });

  it('denies plans without a refund window and payments outside it', () => {
    assert.equal(
      rule('issue_refund', refund(1), [billingEntry(PRINCIPAL, { ...PRO, plan: 'free', price_usd: 0 })]),
      'refund_plan_not_refundable',
    );
    const window = REFUND_POLICY.refundable_days_by_plan.pro_monthly!;
    assert.equal(
      rule('issue_refund', refund(1), [billingEntry(PRINCIPAL, { ...PRO, days_since_first_payment: window })]),
      'allowed',
    );
    assert.equal(
      rule('issue_refund', refund(1), [billingEntry(PRINCIPAL, { ...PRO, days_since_first_payment: window + 1 })]),
      'refund_outside_window',
    );
  });

  it('denies a billing record in another currency', () => {
    assert.equal(
      rule('issue_refund', refund(1), [billingEntry(PRINCIPAL, { ...PRO, currency: 'EUR' })]),
      'refund_currency',
    );
  });

  it('takes the policy as data', () => {
    const teamYearly = refundRulesFor({
      version: 'test',
      currency: 'USD',
      refundable_days_by_plan: { team_yearly: 30 },
    });
    const d = teamYearly(refund(1), {
      principal: String(PRINCIPAL),
      history: [billingEntry(PRINCIPAL, { ...PRO, plan: 'team_yearly', days_since_first_payment: 20 })],
    });
    assert.deepEqual(d, { allowed: true });
    assert.equal(Object.prototype.hasOwnProperty.call(REFUND_POLICY.refundable_days_by_plan, 'constructor'), false);
    assert.equal(
      rule('issue_refund', refund(1), [billingEntry(PRINCIPAL, { ...PRO, plan: 'constructor' })]),
      'refund_plan_not_refundable',
    );
  });

  it('documents every rule it can return', () => {
    for (const r of [
      'other_user',
      'refund_without_billing',
      'refund_currency',
      'refund_plan_not_refundable',
      'refund_outside_window',
      'refund_exceeds_paid',
    ]) {
      assert.ok(r in POLICY_RULES, r);
    }
  });
});

describe('gateway order with the principal policy', () => {
  const ctx = (overrides: Partial<GatewayContext> = {}): GatewayContext => ({
    maxToolCalls: 5,
    allow: ['get_user_profile', 'get_user_billing', 'issue_refund'],
    registry: registryOfDomain(supportDomain),
    toolCalls: 0,
    seenCalls: [],
    policy: (name, args) =>
      checkPrincipalPolicy(registryOfDomain(supportDomain)[name], args, {
        principal: String(PRINCIPAL),
        history: paidPro,
      }),
    ...overrides,
  });
  const reason = (name: string, args: Record<string, unknown>, c: GatewayContext) => {
    const d = checkToolCall(name, args, c);
    return d.allowed ? 'allowed' : d.reason;
  };

  it('denies with policy_denied:<rule>', () => {
    assert.equal(reason('get_user_profile', { user_id: 7 }, ctx()), 'policy_denied:other_user');
    assert.equal(reason('issue_refund', refund(60), ctx()), 'policy_denied:refund_exceeds_paid');
    assert.equal(reason('issue_refund', refund(49), ctx()), 'allowed');
  });

  it('runs after count, allowlist, registry and schema', () => {
    assert.equal(reason('issue_refund', refund(60, 7), ctx({ toolCalls: 5 })), 'max_tool_calls');
    assert.equal(
      reason('issue_refund', refund(60, 7), ctx({ allow: ['get_user_profile'] })),
      'tool_denied:issue_refund',
    );
    assert.equal(reason('issue_refund', refund(60, 7), ctx({ registry: {} })), 'tool_missing:issue_refund');
    assert.equal(reason('issue_refund', { ...refund(60, 7), note: 'x' }, ctx()), 'tool_bad_args:issue_refund');
    assert.equal(reason('issue_refund', refund(-5, 7), ctx()), 'tool_bad_args:issue_refund');
    assert.equal(reason('issue_refund', refund(10.001), ctx()), 'tool_bad_args:issue_refund');
  });

  it('runs before the loop check', () => {
    const seen = [`get_user_profile:${argsHash({ user_id: 7 })}`];
    assert.equal(reason('get_user_profile', { user_id: 7 }, ctx({ seenCalls: seen })), 'policy_denied:other_user');
  });

  it('is skipped when the context has no policy (the gateway stays usable alone)', () => {
    assert.equal(reason('get_user_profile', { user_id: 7 }, ctx({ policy: undefined })), 'allowed');
  });
});
