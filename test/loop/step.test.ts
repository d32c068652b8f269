// Every move of the loop's step decision (workflows/agent/step.ts), table-driven: each row is the run's
// state and what just happened (a step begins, the model answered, a person answered, a tool
// answered or failed, a final answer), and the move the step must make.
import { registryOfDomain } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EMPTY_USAGE, resolveBudget } from '../../common/cost/budget';
import type { Budget, Usage } from '../../common/cost/budget';
import type { ApprovalAnswer, PendingApproval } from '../../common/conversation/approvals';
import type { FinalAction } from '../../common/contract';
import { VALIDATOR_SOURCE } from '../../common/validator/final-validator';
import type { ValidatorMode } from '../../common/validator/final-validator';
import type { DecideOutput, HistoryEntry, Observation } from '../../common/types';
import type { PolicyDecision } from '../../workflows/agent/policy';
import {
  approvalMove,
  consentMove,
  customerMove,
  decideMove,
  escalationMove,
  finalMove,
  ownerMove,
  startStep,
  toolAnswered,
  toolFailedMove,
} from '../../workflows/agent/step';
import type { AdmittedCall, ConsentReply, StepCounters, StepRules } from '../../workflows/agent/step';

const BUDGET = resolveBudget({ max_steps: 8, max_tool_calls: 3, max_seconds: 60, max_tokens: 1000 });
const usage = (fields: Partial<Usage> = {}): Usage => ({ ...EMPTY_USAGE, ...fields });
const ALLOWED: PolicyDecision = { allowed: true };
const OTHER_USER: PolicyDecision = { allowed: false, rule: 'other_user' };

function observation(tool: string, data: unknown, ok = true): Observation {
  return { tool, ok, data, source: 'test', bytes: JSON.stringify(data).length, truncated: false };
}

function decision(action: unknown): DecideOutput {
  const text = typeof action === 'string' ? action : JSON.stringify(action);
  return { text, model: 'test', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
}

/** The fields of a move a row states: where it goes, why it stops, what it traces and counts. */
function shapeOf(move: object): Record<string, unknown> {
  const m = move as Record<string, unknown> & {
    trace?: { stop_reason?: unknown; approval?: unknown; ok?: unknown };
    call?: { name: string };
    counters?: { usage: Usage; seenCalls: readonly string[]; reads?: readonly string[] };
  };
  return {
    next: m.next,
    ...(m.reason !== undefined ? { reason: m.reason } : {}),
    ...(m.metric !== undefined ? { metric: m.metric } : {}),
    ...(m.trace?.stop_reason !== undefined ? { trace_stop: m.trace.stop_reason } : {}),
    ...(m.trace?.approval !== undefined ? { trace_approval: m.trace.approval } : {}),
    ...(m.call ? { call: m.call.name, needsApproval: m.needsApproval } : {}),
    ...(m.counters
      ? {
          tool_calls: m.counters.usage.tool_calls,
          seen: m.counters.seenCalls.length + (m.counters.reads?.length ?? 0),
        }
      : {}),
    ...(typeof m.repeat === 'number' && m.repeat > 0 ? { repeat: m.repeat } : {}),
  };
}

describe('startStep: before a step', () => {
  const chain = { stepsAtStart: 0, every: 100, suggested: false };
  const rows: Array<{
    name: string;
    budget?: Budget;
    usage: Usage;
    chain?: typeof chain;
    customerEnded?: boolean;
    expected: object;
  }> = [
    { name: 'a fresh run decides step 1', usage: usage(), expected: { next: 'decide', step: 1 } },
    {
      name: 'the customer ended the conversation while the agent worked: the run ends',
      usage: usage({ steps: 3 }),
      customerEnded: true,
      expected: { next: 'stop', reason: 'customer_ended' },
    },
    {
      name: 'the customer ended it: that wins over a spent budget',
      usage: usage({ steps: 8 }),
      customerEnded: true,
      expected: { next: 'stop', reason: 'customer_ended' },
    },
    { name: 'steps left: the next step', usage: usage({ steps: 3 }), expected: { next: 'decide', step: 4 } },
    { name: 'max_steps spent', usage: usage({ steps: 8 }), expected: { next: 'stop', reason: 'max_steps' } },
    {
      name: 'max_seconds spent',
      usage: usage({ elapsed_ms: 60_000 }),
      expected: { next: 'stop', reason: 'max_seconds' },
    },
    {
      name: 'max_tokens spent',
      usage: usage({ total_tokens: 1000 }),
      expected: { next: 'stop', reason: 'max_tokens' },
    },
    {
      name: 'no token budget: tokens never stop it',
      budget: resolveBudget({ max_tokens: 0 }),
      usage: usage({ total_tokens: 1e9 }),
      expected: { next: 'decide', step: 1 },
    },
    {
      name: 'a spent budget wins over continue-as-new',
      usage: usage({ steps: 8 }),
      chain: { stepsAtStart: 0, every: 8, suggested: true },
      expected: { next: 'stop', reason: 'max_steps' },
    },
    {
      name: 'this run took `every` steps: continue as new',
      usage: usage({ steps: 5 }),
      chain: { stepsAtStart: 3, every: 2, suggested: false },
      expected: { next: 'continue_as_new' },
    },
    {
      name: 'fewer than `every` since this run started: the next step',
      usage: usage({ steps: 5 }),
      chain: { stepsAtStart: 4, every: 2, suggested: false },
      expected: { next: 'decide', step: 6 },
    },
    {
      name: 'Temporal suggests continue-as-new',
      usage: usage({ steps: 1 }),
      chain: { stepsAtStart: 0, every: 100, suggested: true },
      expected: { next: 'continue_as_new' },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const start = startStep(row.budget ?? BUDGET, row.usage, row.chain ?? chain, row.customerEnded);
      const shape = start.next === 'decide' ? { next: start.next, step: start.step } : start;
      assert.deepEqual(shape, row.expected);
      if (start.next === 'decide') assert.equal(start.usage.steps, start.step, 'the step is counted');
    });
  }
});

describe('decideMove: after the model answered', () => {
  const profile = { kind: 'tool', name: 'get_user_profile', args: { user_id: 42 } };
  const seenProfile = (() => {
    const first = decideMove(decision(profile), 1, { usage: usage(), seenCalls: [] }, rules());
    assert.equal(first.next, 'call_tool');
    // A read is remembered among the reads of its scope, not among the calls never made again.
    assert.equal(first.next === 'call_tool' && first.counters.seenCalls.length, 0);
    return first.next === 'call_tool' ? [...(first.counters.reads ?? [])] : [];
  })();
  function rules(policy: PolicyDecision = ALLOWED, allow = ['get_user_profile', 'search_policy', 'issue_refund']) {
    return {
      budget: BUDGET,
      allow,
      registry: registryOfDomain(supportDomain),
      policy: () => policy,
    } satisfies StepRules;
  }
  const rows: Array<{
    name: string;
    decision: DecideOutput;
    state?: StepCounters;
    rules?: StepRules;
    expected: object;
  }> = [
    {
      name: 'an answer cut to a preview: too_large',
      decision: { ...decision('{"kind":"fi'), too_large: { bytes: 1 << 20 } },
      expected: { next: 'stop', reason: 'invalid_action:too_large' },
    },
    {
      name: 'not JSON: bad_json',
      decision: decision('I think I should refund'),
      expected: { next: 'stop', reason: 'invalid_action:bad_json' },
    },
    {
      name: 'a tool action without a name',
      decision: decision({ kind: 'tool', args: {} }),
      expected: { next: 'stop', reason: 'invalid_action:missing_tool_name' },
    },
    {
      name: 'a final answer',
      decision: decision({ kind: 'final', answer: 'Done.' }),
      expected: { next: 'finish' },
    },
    {
      name: 'a final answer with a decision_summary',
      decision: decision({ kind: 'final', answer: 'Done.', decision_summary: 'Answered' }),
      expected: { next: 'finish' },
    },
    {
      name: 'an escalation',
      decision: decision({ kind: 'escalate', reason: 'The user insists.' }),
      expected: { next: 'escalate' },
    },
    {
      name: 'a read-only call the gateway lets through',
      decision: decision(profile),
      expected: { next: 'call_tool', call: 'get_user_profile', needsApproval: false, tool_calls: 1, seen: 1 },
    },
    {
      name: 'a refund: it needs a person',
      decision: decision({
        kind: 'tool',
        name: 'issue_refund',
        args: { user_id: 42, amount_usd: 49, reason: 'within the window' },
      }),
      expected: { next: 'call_tool', call: 'issue_refund', needsApproval: true, tool_calls: 1, seen: 1 },
    },
    {
      name: 'a tool outside the allowlist',
      decision: decision(profile),
      rules: rules(ALLOWED, ['search_policy']),
      expected: {
        next: 'stop',
        reason: 'tool_denied:get_user_profile',
        metric: { tool: 'get_user_profile', outcome: 'denied' },
        trace_stop: 'tool_denied:get_user_profile',
      },
    },
    {
      name: 'an allowed name no tool has',
      decision: decision({ kind: 'tool', name: 'launch_rockets', args: {} }),
      rules: rules(ALLOWED, ['launch_rockets']),
      expected: {
        next: 'stop',
        reason: 'tool_missing:launch_rockets',
        metric: { tool: 'launch_rockets', outcome: 'denied' },
        trace_stop: 'tool_missing:launch_rockets',
      },
    },
    {
      name: 'arguments the tool does not take',
      decision: decision({ kind: 'tool', name: 'get_user_profile', args: { user_id: 'forty-two' } }),
      expected: {
        next: 'stop',
        reason: 'tool_bad_args:get_user_profile',
        metric: { tool: 'get_user_profile', outcome: 'denied' },
        trace_stop: 'tool_bad_args:get_user_profile',
      },
    },
    {
      name: 'the principal policy refuses',
      decision: decision(profile),
      rules: rules(OTHER_USER),
      expected: {
        next: 'stop',
        reason: 'policy_denied:other_user',
        metric: { tool: 'get_user_profile', outcome: 'denied' },
        trace_stop: 'policy_denied:other_user',
      },
    },
    {
      name: 'no tool calls left',
      decision: decision(profile),
      state: { usage: usage({ tool_calls: 3 }), seenCalls: [] },
      expected: {
        next: 'stop',
        reason: 'max_tool_calls',
        metric: { tool: 'get_user_profile', outcome: 'denied' },
        trace_stop: 'max_tool_calls',
      },
    },
    {
      name: 'the same read again with no repeats allowed: loop_detected',
      decision: decision(profile),
      state: { usage: usage({ tool_calls: 1 }), seenCalls: [], reads: seenProfile },
      expected: {
        next: 'stop',
        reason: 'loop_detected',
        metric: { tool: 'get_user_profile', outcome: 'denied' },
        trace_stop: 'loop_detected',
      },
    },
    {
      name: 'the same read again within max_repeats: a repeat, no tool call counted',
      decision: decision(profile),
      state: { usage: usage({ tool_calls: 1 }), seenCalls: [], reads: seenProfile },
      rules: { ...rules(), maxRepeats: 2 },
      expected: {
        next: 'call_tool',
        call: 'get_user_profile',
        needsApproval: false,
        tool_calls: 1,
        seen: 2,
        repeat: 1,
      },
    },
    {
      name: 'the same read past max_repeats: loop_detected',
      decision: decision(profile),
      state: {
        usage: usage({ tool_calls: 1 }),
        seenCalls: [],
        reads: [...seenProfile, ...seenProfile, ...seenProfile],
      },
      rules: { ...rules(), maxRepeats: 2 },
      expected: {
        next: 'stop',
        reason: 'loop_detected',
        metric: { tool: 'get_user_profile', outcome: 'denied' },
        trace_stop: 'loop_detected',
      },
    },
    {
      name: 'a call recorded among the calls never made again (a write, or an older run): loop_detected',
      decision: decision(profile),
      state: { usage: usage({ tool_calls: 1 }), seenCalls: seenProfile },
      rules: { ...rules(), maxRepeats: 2 },
      expected: {
        next: 'stop',
        reason: 'loop_detected',
        metric: { tool: 'get_user_profile', outcome: 'denied' },
        trace_stop: 'loop_detected',
      },
    },
    {
      name: 'a message to the customer in a conversation run',
      decision: decision({ kind: 'message', text: 'Which order do you mean?' }),
      rules: { ...rules(), conversation: true },
      expected: { next: 'message' },
    },
    {
      name: 'a message outside a conversation is no action of the contract',
      decision: decision({ kind: 'message', text: 'Which order do you mean?' }),
      expected: { next: 'stop', reason: 'invalid_action:bad_kind' },
    },
    {
      name: 'a message without text',
      decision: decision({ kind: 'message', text: '  ' }),
      rules: { ...rules(), conversation: true },
      expected: { next: 'stop', reason: 'invalid_action:missing_text' },
    },
    {
      name: 'a message with keys the contract does not allow',
      decision: decision({ kind: 'message', text: 'hi', to: 'someone else' }),
      rules: { ...rules(), conversation: true },
      expected: { next: 'stop', reason: 'invalid_action:extra_keys' },
    },
    {
      name: 'another call after one seen',
      decision: decision({ kind: 'tool', name: 'search_policy', args: { query: 'refund' } }),
      state: { usage: usage({ tool_calls: 1 }), seenCalls: [], reads: seenProfile },
      expected: { next: 'call_tool', call: 'search_policy', needsApproval: false, tool_calls: 2, seen: 2 },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const state = row.state ?? { usage: usage(), seenCalls: [] };
      const move = decideMove(row.decision, 2, state, row.rules ?? rules());
      assert.deepEqual(shapeOf(move), row.expected);
      if (move.next === 'stop') assert.equal(move.trace?.step ?? 2, 2);
    });
  }
});

const CALL: AdmittedCall = {
  step: 3,
  name: 'issue_refund',
  args: { user_id: 42, amount_usd: 49, reason: 'within the window' },
  argsHash: 'abc123',
};
const PENDING: PendingApproval = {
  id: 'approval-3',
  kind: 'tool_call',
  step: 3,
  tool: 'issue_refund',
  args: CALL.args,
  args_hash: CALL.argsHash,
  amount_usd: 49,
  requested_at: '2026-01-01T00:00:00.000Z',
  expires_at: '2026-01-01T01:00:00.000Z',
};
const APPROVE: ApprovalAnswer = { id: 'approval-3', decision: 'approve' };

describe('approvalMove: after a person was asked about a call', () => {
  const rows: Array<{ name: string; reply: ApprovalAnswer | undefined; recheck: PolicyDecision; expected: object }> = [
    {
      name: 'nobody answered in time',
      reply: undefined,
      recheck: ALLOWED,
      expected: {
        next: 'stop',
        reason: 'approval_timeout',
        metric: { tool: 'issue_refund', outcome: 'approval_timeout' },
        trace_stop: 'approval_timeout',
      },
    },
    {
      name: 'rejected: the model sees it next step',
      reply: { id: 'approval-3', decision: 'reject', reason: 'refunded by phone' },
      recheck: ALLOWED,
      expected: { next: 'rejected', trace_approval: 'reject' },
    },
    {
      name: 'approved, and the policy still allows it',
      reply: APPROVE,
      recheck: ALLOWED,
      expected: { next: 'call_tool' },
    },
    {
      name: 'approved, but the policy no longer allows it',
      reply: APPROVE,
      recheck: { allowed: false, rule: 'refund_outside_window' },
      expected: {
        next: 'stop',
        reason: 'policy_denied:refund_outside_window',
        metric: { tool: 'issue_refund', outcome: 'denied' },
        trace_stop: 'policy_denied:refund_outside_window',
        trace_approval: 'approve',
      },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const move = approvalMove(CALL, PENDING, row.reply, () => row.recheck);
      assert.deepEqual(shapeOf(move), row.expected);
      if (move.next === 'rejected') {
        assert.equal(move.outcome, 'rejected');
        assert.deepEqual(move.history.observation.data, { rejected: 'refunded by phone' });
      }
    });
  }
});

describe('escalationMove: after the model escalated', () => {
  const pending: PendingApproval = { ...PENDING, id: 'escalation-3', kind: 'escalation', reason: 'insists' };
  const action = { kind: 'escalate' as const, reason: 'insists' };
  const rows: Array<{ name: string; reply: ApprovalAnswer | undefined; expected: object }> = [
    {
      name: 'nobody answered in time',
      reply: undefined,
      expected: { next: 'stop', reason: 'approval_timeout', trace_stop: 'approval_timeout' },
    },
    {
      name: "a person's answer is the next observation",
      reply: { id: 'escalation-3', decision: 'answer', text: 'Call them back.' },
      expected: { next: 'answered', trace_approval: 'answer' },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const move = escalationMove(pending, action, row.reply);
      assert.deepEqual(shapeOf(move), row.expected);
      if (move.next === 'answered') assert.deepEqual(move.history.observation.data, { answer: 'Call them back.' });
    });
  }
});

describe("customerMove: after the agent's message", () => {
  const action = { kind: 'message' as const, text: 'Which order do you mean?' };
  const rows: Array<{ name: string; reply: 'answered' | 'ended' | 'idle'; expected: object }> = [
    { name: 'the customer answered: the next step reads it', reply: 'answered', expected: { next: 'answered' } },
    {
      name: 'the customer ended the conversation',
      reply: 'ended',
      expected: { next: 'stop', reason: 'customer_ended', trace_stop: 'customer_ended' },
    },
    {
      name: 'the customer did not answer within the idle timeout',
      reply: 'idle',
      expected: { next: 'stop', reason: 'idle_timeout', trace_stop: 'idle_timeout' },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const move = customerMove(4, action, row.reply);
      assert.deepEqual(shapeOf(move), row.expected);
      assert.deepEqual([move.trace?.step, move.trace?.tool, move.trace?.ok], [4, 'message', true]);
    });
  }
});

describe("ownerMove: before a call on another's object", () => {
  const call: AdmittedCall = { step: 3, name: 'cancel_pending_order', args: { order_id: '#W1' }, argsHash: 'h' };
  const rows: Array<{ name: string; owner: string | null; principal: string | undefined; expected: object }> = [
    {
      name: "the principal's own order: the call goes on",
      owner: 'ivan',
      principal: 'ivan',
      expected: { next: 'go_on' },
    },
    {
      name: "another user's order: the run stops before anyone is asked",
      owner: 'anya',
      principal: 'ivan',
      expected: {
        next: 'stop',
        reason: 'policy_denied:other_user',
        metric: { tool: 'cancel_pending_order', outcome: 'denied' },
        trace_stop: 'policy_denied:other_user',
      },
    },
    {
      name: 'an owned order and nobody authenticated: denied',
      owner: 'anya',
      principal: undefined,
      expected: {
        next: 'stop',
        reason: 'policy_denied:other_user',
        metric: { tool: 'cancel_pending_order', outcome: 'denied' },
        trace_stop: 'policy_denied:other_user',
      },
    },
    { name: 'no such order: the tool itself refuses it', owner: null, principal: 'ivan', expected: { next: 'go_on' } },
  ];
  for (const row of rows) {
    it(row.name, () => assert.deepEqual(shapeOf(ownerMove(call, row.owner, row.principal)), row.expected));
  }
});

describe('consentMove: after the customer was asked to confirm a write', () => {
  const call: AdmittedCall = { step: 5, name: 'cancel_pending_order', args: { order_id: '#W1' }, argsHash: 'h' };
  const rows: Array<{ name: string; reply: ConsentReply; expected: object }> = [
    {
      name: 'an explicit yes: the tool runs',
      reply: { reply: 'answered', text: 'Yes, please.' },
      expected: { next: 'call_tool' },
    },
    {
      name: 'a conditional yes is no consent',
      reply: { reply: 'answered', text: 'yes, but change the reason' },
      expected: { next: 'declined' },
    },
    { name: 'a no', reply: { reply: 'answered', text: 'no' }, expected: { next: 'declined' } },
    { name: 'the customer left', reply: { reply: 'ended' }, expected: { next: 'stop', reason: 'customer_ended' } },
    { name: 'the customer went silent', reply: { reply: 'idle' }, expected: { next: 'stop', reason: 'idle_timeout' } },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const move = consentMove(call, row.reply);
      assert.deepEqual(shapeOf(move), row.expected);
      if (move.next !== 'declined') return;
      assert.deepEqual(move.trace, {
        step: 5,
        tool: 'cancel_pending_order',
        args_hash: 'h',
        ok: false,
        consent: 'declined',
      });
      assert.equal(move.outcome, 'rejected');
      assert.deepEqual(move.history.action, { kind: 'tool', name: 'cancel_pending_order', args: { order_id: '#W1' } });
      const data = move.history.observation.data as { declined: boolean; customer_reply: string };
      assert.deepEqual(
        [move.history.observation.ok, data.declined, data.customer_reply],
        [false, true, (row.reply as { text: string }).text],
      );
    });
  }
});

describe('toolFailedMove and toolAnswered: after the tool', () => {
  const failedRows: Array<{ name: string; approval: ApprovalAnswer | undefined; expected: object }> = [
    {
      name: 'failed for good',
      approval: undefined,
      expected: {
        next: 'stop',
        reason: 'tool_error:issue_refund',
        metric: { tool: 'issue_refund', outcome: 'failed' },
        trace_stop: 'tool_error:issue_refund',
      },
    },
    {
      name: 'failed for good after an approval: the trace says it was approved',
      approval: APPROVE,
      expected: {
        next: 'stop',
        reason: 'tool_error:issue_refund',
        metric: { tool: 'issue_refund', outcome: 'failed' },
        trace_stop: 'tool_error:issue_refund',
        trace_approval: 'approve',
      },
    },
  ];
  for (const row of failedRows) {
    it(row.name, () => assert.deepEqual(shapeOf(toolFailedMove(CALL, row.approval)), row.expected));
  }

  const answeredRows: Array<{ name: string; observation: Observation; approval?: ApprovalAnswer; expected: object }> = [
    {
      name: 'answered ok',
      observation: observation('issue_refund', { refund: { state: 'confirmed' } }),
      expected: { outcome: 'ok', ok: true },
    },
    {
      name: 'answered with an error: still the model’s next input',
      observation: observation('issue_refund', { error: 'no such user' }, false),
      expected: { outcome: 'error', ok: true },
    },
    {
      name: 'answered after an approval',
      observation: observation('issue_refund', { refund: { state: 'confirmed' } }),
      approval: APPROVE,
      expected: { outcome: 'ok', ok: true, approval: 'approve' },
    },
  ];
  for (const row of answeredRows) {
    it(row.name, () => {
      const answered = toolAnswered(CALL, row.approval, row.observation, 1_000);
      const { outcome, trace, history } = answered;
      assert.deepEqual(
        { outcome, ok: trace.ok, ...(trace.approval ? { approval: trace.approval } : {}) },
        row.expected,
      );
      assert.deepEqual(history, {
        step: 3,
        action: { kind: 'tool', name: 'issue_refund', args: CALL.args },
        observation: row.observation,
        observed_at_ms: 1_000,
      });
    });
  }
});

describe('finalMove: the final validator', () => {
  const billing = observation('get_user_billing', { billing: { currency: 'USD', plan: 'pro_monthly', price_usd: 49 } });
  const read: HistoryEntry = {
    step: 1,
    action: { kind: 'tool', name: 'get_user_billing', args: { user_id: 42 } },
    observation: billing,
  };
  const bounced = finalMove({ kind: 'final', answer: 'Refunded $59.' }, 2, [read], 'enforce');
  assert.equal(bounced.next, 'bounce');
  const afterBounce = bounced.next === 'bounce' ? [read, bounced.history] : [];
  const supported: FinalAction = { kind: 'final', answer: 'Refunded $49.' };
  const unsupported: FinalAction = { kind: 'final', answer: 'Refunded $59.' };
  const rows: Array<{
    name: string;
    action: FinalAction;
    mode: ValidatorMode;
    history: HistoryEntry[];
    expected: object;
  }> = [
    {
      name: 'off: accepted unchecked',
      action: unsupported,
      mode: 'off',
      history: [read],
      expected: { next: 'finish', verdict: 'unchecked', bounces: 0 },
    },
    {
      name: 'enforce, supported: accepted',
      action: supported,
      mode: 'enforce',
      history: [read],
      expected: { next: 'finish', verdict: 'supported', bounces: 0 },
    },
    {
      name: 'warn, unsupported: accepted with the claims recorded',
      action: unsupported,
      mode: 'warn',
      history: [read],
      expected: { next: 'finish', verdict: 'unsupported', bounces: 0 },
    },
    {
      name: 'enforce, unsupported the first time: bounced to the model',
      action: unsupported,
      mode: 'enforce',
      history: [read],
      expected: { next: 'bounce', verdict: 'unsupported', bounces: 1 },
    },
    {
      name: 'enforce, unsupported again: the run ends',
      action: unsupported,
      mode: 'enforce',
      history: afterBounce,
      expected: { next: 'stop', reason: 'unsupported_answer', verdict: 'unsupported', bounces: 1 },
    },
    {
      name: 'enforce, supported after a bounce: accepted, the bounce counted',
      action: supported,
      mode: 'enforce',
      history: afterBounce,
      expected: { next: 'finish', verdict: 'supported', bounces: 1 },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const move = finalMove(row.action, 3, row.history, row.mode);
      const validation = move.next === 'stop' ? move.extra?.validation : move.validation;
      assert.deepEqual(
        {
          next: move.next,
          ...(move.next === 'stop' ? { reason: move.reason } : {}),
          verdict: validation?.verdict,
          bounces: validation?.bounces,
        },
        row.expected,
      );
      if (move.next === 'bounce') assert.equal(move.history.observation.source, VALIDATOR_SOURCE);
    });
  }
});
