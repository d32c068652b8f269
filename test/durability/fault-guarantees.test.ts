// Pure pieces of the fault guarantees: the input contract at the workflow's entry, the bounded
// continue-as-new state, loop detection over free text, the effects record, search attribute
// values, and refund facts that age across an approval wait.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkAgentInput, INPUT_LIMITS } from '../../common/input';
import { carryState, CARRY_LIMITS } from '../../workflows/agent/carry';
import type { RunState } from '../../workflows/agent/carry';
import { checkToolCall } from '../../workflows/agent/gateway';
import type { GatewayContext } from '../../workflows/agent/gateway';
import { loopSignature, registryOfDomain } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';
import { attributeStopReason } from '../../common/temporal/search-attributes';
import { countEffects, effectFromObservation, effectFromReconcile } from '../../workflows/agent/effects';
import { checkPrincipalPolicy } from '../../workflows/agent/policy';
import { EMPTY_USAGE } from '../../common/cost/budget';
import type { HistoryEntry, Observation } from '../../common/types';

const valid = { goal: 'refund?', principal: '42', allow: ['get_user_billing'] };

describe('workflow input contract', () => {
  it('accepts a minimal input and the documented ceilings', () => {
    assert.equal(checkAgentInput(valid, supportDomain).ok, true);
    const atCeilings = {
      ...valid,
      budget: {
        max_steps: INPUT_LIMITS.max_steps,
        max_tool_calls: INPUT_LIMITS.max_tool_calls,
        max_seconds: INPUT_LIMITS.max_seconds,
        max_tokens: 0,
      },
      approval_timeout_seconds: INPUT_LIMITS.approval_timeout_seconds,
      continue_as_new_every: INPUT_LIMITS.continue_as_new_every,
      llm_max_attempts: INPUT_LIMITS.llm_max_attempts,
    };
    assert.equal(checkAgentInput(atCeilings, supportDomain).ok, true);
  });

  const refused: Array<[string, unknown, RegExp]> = [
    [
      'an approval timeout a timer cannot take',
      { ...valid, approval_timeout_seconds: 9_000_000_000_000 },
      /^invalid run input: approval_timeout_seconds: /,
    ],
    ['max_steps 0', { ...valid, budget: { max_steps: 0 } }, /^invalid run input: budget\.max_steps: /],
    ['max_tool_calls 0', { ...valid, budget: { max_tool_calls: 0 } }, /budget\.max_tool_calls/],
    ['a fractional budget', { ...valid, budget: { max_seconds: 1.5 } }, /budget\.max_seconds/],
    ['an unknown budget key', { ...valid, budget: { max_eur: 3 } }, /budget: .*max_eur/],
    ['an unknown tool in allow', { ...valid, allow: ['get_user_billing', 'rm_rf'] }, /allow\.1: unknown tool "rm_rf"/],
    [
      'a tool allowed twice',
      { ...valid, allow: ['search_policy', 'search_policy'] },
      /allow: allow lists a tool twice/,
    ],
    ['continue-as-new every 0 steps', { ...valid, continue_as_new_every: 0 }, /continue_as_new_every/],
    ['llm attempts above the ceiling', { ...valid, llm_max_attempts: 1000 }, /llm_max_attempts/],
    ['an empty goal', { ...valid, goal: '   ' }, /goal: the goal must not be empty/],
    ['a principal that is not a string', { ...valid, principal: 42 }, /principal/],
    [
      'a principal the domain does not know',
      { ...valid, principal: '4x2' },
      /^invalid run input: principal: "4x2" is not a support user id/,
    ],
    ['the old user_id field', { goal: 'refund?', user_id: 42, allow: [] }, /principal|user_id/],
    ['an unknown field', { ...valid, admin: true }, /admin/],
    ['not an object', 'refund please', /invalid run input: /],
  ];
  for (const [what, input, pattern] of refused) {
    it(`refuses ${what} with one line`, () => {
      const check = checkAgentInput(input, supportDomain);
      assert.equal(check.ok, false);
      if (check.ok) return;
      assert.match(check.error, pattern);
      assert.doesNotMatch(check.error, /\n/);
    });
  }
});

function obs(tool: string, data: unknown, ok = true): Observation {
  return { tool, ok, data, source: 'test', trust: 'untrusted', bytes: JSON.stringify(data).length, truncated: false };
}

function longRun(steps: number): RunState {
  const history: HistoryEntry[] = [];
  for (let step = 1; step <= steps; step++) {
    const name = step === 2 ? 'get_user_billing' : 'search_policy';
    const args = step === 2 ? { user_id: 42 } : { query: `policy question number ${step}` };
    const data =
      step === 2
        ? { billing: { currency: 'USD', plan: 'pro_monthly', price_usd: 49, days_since_first_payment: 10 } }
        : { snippets: ['x'.repeat(300)] };
    history.push({ step, action: { kind: 'tool', name, args }, observation: obs(name, data), observed_at_ms: step });
  }
  return {
    started_at_ms: 0,
    usage: { ...EMPTY_USAGE, steps },
    trace: history.map((h) => ({ step: h.step, tool: 'search_policy', args_hash: 'abcdefabcdef', ok: true })),
    history,
    seen_calls: history.map((h) => `search_policy:${h.step.toString(16).padStart(12, '0')}`),
    human_wait_ms: 0,
    effects: [],
    omitted: { trace: 0, history: 0 },
  };
}

describe('continue-as-new carries a bounded state', () => {
  it('a 10,000-step run carries a tail, the billing fact, hashed seen calls and exact counts', () => {
    const carried = carryState(longRun(10_000));
    const bytes = Buffer.byteLength(JSON.stringify(carried));
    // 10,000 seen calls at 16 hex digits are ~190 KB; the rest is constant. Temporal's limit is 2 MB.
    assert.ok(bytes < 300_000, `carried state is ${bytes} bytes`);
    assert.equal(carried.trace.length, CARRY_LIMITS.trace);
    assert.equal(carried.trace.at(-1)!.step, 10_000);
    assert.deepEqual(carried.omitted, { trace: 10_000 - CARRY_LIMITS.trace, history: 10_000 - carried.history.length });
    assert.equal(carried.usage.steps, 10_000);
    assert.equal(carried.seen_calls.length, 10_000);
    assert.ok(carried.seen_calls.every((h) => /^[0-9a-f]{16}$/.test(h)));
    // The policy gate still finds the billing record read at step 2.
    const policy = checkPrincipalPolicy(
      registryOfDomain(supportDomain).issue_refund,
      { user_id: 42, amount_usd: 49, reason: 'ok' },
      { principal: '42', history: carried.history },
    );
    assert.deepEqual(policy, { allowed: true });
  });

  it('grows with the number of distinct calls only, not with observation sizes or steps', () => {
    const a = Buffer.byteLength(JSON.stringify({ ...carryState(longRun(1_000)), seen_calls: [] }));
    const b = Buffer.byteLength(JSON.stringify({ ...carryState(longRun(5_000)), seen_calls: [] }));
    assert.ok(Math.abs(a - b) < 2_000, `1,000 steps: ${a} bytes, 5,000 steps: ${b} bytes`);
  });

  it('carrying twice keeps the counts exact and the hashes stable', () => {
    const once = carryState(longRun(500));
    const twice = carryState({
      ...longRun(0),
      ...once,
      human_wait_ms: 0,
      effects: [],
      omitted: once.omitted!,
    } as RunState);
    assert.deepEqual(twice.seen_calls, once.seen_calls);
    assert.deepEqual(twice.omitted, once.omitted);
  });
});

describe("loop detection folds free text by each tool's schema", () => {
  const ctx = (seenCalls: string[]): GatewayContext => ({
    maxToolCalls: 10,
    allow: ['search_policy', 'get_user_billing'],
    registry: registryOfDomain(supportDomain),
    toolCalls: seenCalls.length,
    seenCalls,
    loopSignature,
  });

  it('"refund", "Refund", " REFUND " and a full-width "ｒｅｆｕｎｄ" are one call', () => {
    const first = checkToolCall('search_policy', { query: 'refund' }, ctx([]));
    assert.equal(first.allowed, true);
    if (!first.allowed) return;
    for (const query of ['Refund', 'REFUND', '  refund  ', 'ｒｅｆｕｎｄ']) {
      const again = checkToolCall('search_policy', { query }, ctx([first.signature]));
      assert.equal(again.allowed ? 'allowed' : again.reason, 'loop_detected', query);
    }
    const other = checkToolCall('search_policy', { query: 'refund window' }, ctx([first.signature]));
    assert.equal(other.allowed, true);
  });

  it('does not fold arguments that are not free text', () => {
    assert.notEqual(
      loopSignature('get_user_billing', { user_id: 42 }),
      loopSignature('get_user_billing', { user_id: 43 }),
    );
  });
});

describe('effects and what operators see', () => {
  const call = {
    tool: 'issue_refund',
    idempotency_key: 'wf:3:issue_refund:abc',
    step: 3,
    args: { user_id: 42, amount_usd: 49, reason: 'x' },
  };

  it("reads the outcome from the tool's observation", () => {
    const refund = (state: string, rejected?: string) =>
      obs(
        'issue_refund',
        { refund: { refund_id: 7, state }, ...(rejected ? { rejected } : {}) },
        state === 'confirmed',
      );
    assert.equal(effectFromObservation(call, refund('confirmed')).state, 'confirmed');
    assert.equal(effectFromObservation(call, refund('rejected', 'exceeds_paid')).state, 'rejected');
    assert.equal(effectFromObservation(call, refund('rejected', 'voided')).state, 'not_made');
    assert.equal(
      effectFromObservation(call, obs('issue_refund', { rejected: 'not_principal' }, false)).state,
      'not_made',
    );
    assert.equal(effectFromObservation(call, obs('issue_refund', { something: 'else' })).state, 'ambiguous');
  });

  it('a failed lookup is ambiguous, never silently not made', () => {
    const e = effectFromReconcile(call, { error: 'refunds service down' });
    assert.equal(e.state, 'ambiguous');
    assert.equal(e.amount_usd, 49);
    assert.match(e.detail!, /refunds service down/);
    assert.deepEqual(countEffects([e, effectFromReconcile(call, { state: 'confirmed', amount_usd: 49 })]), {
      confirmed: 1,
      rejected: 0,
      not_made: 0,
      ambiguous: 1,
    });
  });

  it('search attributes hold registry names only', () => {
    assert.equal(
      attributeStopReason(
        `tool_denied:${'ignore previous instructions '.repeat(3).slice(0, 64)}`,
        registryOfDomain(supportDomain),
      ),
      'tool_denied:unknown',
    );
    assert.equal(
      attributeStopReason('tool_denied:issue_refund', registryOfDomain(supportDomain)),
      'tool_denied:issue_refund',
    );
    assert.equal(attributeStopReason('tool_missing:rm -rf /', registryOfDomain(supportDomain)), 'tool_missing:unknown');
    assert.equal(
      attributeStopReason('policy_denied:other_user', registryOfDomain(supportDomain)),
      'policy_denied:other_user',
    );
    assert.equal(attributeStopReason('max_steps', registryOfDomain(supportDomain)), 'max_steps');
  });
});

describe('refund facts age across an approval wait', () => {
  const billing = (days: number): HistoryEntry => ({
    step: 1,
    action: { kind: 'tool', name: 'get_user_billing', args: { user_id: 42 } },
    observation: obs('get_user_billing', {
      billing: { currency: 'USD', plan: 'pro_monthly', price_usd: 49, days_since_first_payment: days },
    }),
    observed_at_ms: 1_000_000,
  });
  const refund = { user_id: 42, amount_usd: 49, reason: 'within window' };
  const check = (days: number, nowMs?: number) => {
    const d = checkPrincipalPolicy(registryOfDomain(supportDomain).issue_refund, refund, {
      principal: '42',
      history: [billing(days)],
      ...(nowMs !== undefined ? { nowMs } : {}),
    });
    return d.allowed ? 'allowed' : d.rule;
  };

  it('the last day of the window is inside it, the day after is not', () => {
    assert.equal(check(14, 1_000_000), 'allowed');
    assert.equal(check(14.9999, 1_000_000), 'allowed');
    assert.equal(check(15, 1_000_000), 'refund_outside_window');
  });

  it('a fact read seconds before its day ends is outside the window after a longer wait', () => {
    assert.equal(check(14.9999, 1_000_000 + 2_000), 'allowed');
    assert.equal(check(14.9999, 1_000_000 + 10_000), 'refund_outside_window');
    assert.equal(check(10, 1_000_000 + 4 * 86_400_000), 'allowed');
    assert.equal(check(10, 1_000_000 + 5 * 86_400_000), 'refund_outside_window');
    // Without a clock (histories recorded before facts aged) the number is taken as observed.
    assert.equal(check(14.5), 'refund_outside_window');
  });
});
