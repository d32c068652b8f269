// The approval Update's validation (pure) and the escalate action in the contract.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkApprovalAnswer, personObservation } from '../../common/conversation/approvals';
import type { AnsweredApproval, PendingApproval } from '../../common/conversation/approvals';
import { validateAction } from '../../common/contract';

const refundCall: PendingApproval = {
  id: '4-issue_refund-0123456789ab',
  kind: 'tool_call',
  step: 4,
  tool: 'issue_refund',
  args: { user_id: 42, amount_usd: 49, reason: 'within window' },
  args_hash: '0123456789ab',
  amount_usd: 49,
  requested_at: '2026-01-01T00:00:00.000Z',
  expires_at: '2026-01-01T01:00:00.000Z',
};
const escalation: PendingApproval = {
  id: '3-escalate',
  kind: 'escalation',
  step: 3,
  reason: 'user is angry',
  requested_at: '',
  expires_at: '',
};
const none = new Map<string, AnsweredApproval>();

function error(raw: unknown, pending: PendingApproval | undefined, answered = none): string {
  const c = checkApprovalAnswer(raw, pending, answered);
  assert.equal(c.ok, false, `expected a rejection for ${JSON.stringify(raw)}`);
  return c.ok ? '' : c.error;
}

describe('approval update validation', () => {
  it('accepts an approval of exactly the pending call', () => {
    const c = checkApprovalAnswer(
      { id: refundCall.id, decision: 'approve', tool: 'issue_refund', args_hash: '0123456789ab', amount_usd: 49 },
      refundCall,
      none,
    );
    assert.deepEqual(c, { ok: true, duplicate: false, pending: refundCall });
    assert.equal(
      checkApprovalAnswer({ id: refundCall.id, decision: 'reject', reason: 'no' }, refundCall, none).ok,
      true,
    );
  });

  it('rejects an answer when nothing is pending', () => {
    assert.match(error({ id: refundCall.id, decision: 'approve' }, undefined), /nothing is awaiting approval/);
  });

  it('rejects an answer to another call, or one whose tool, arguments or amount differ', () => {
    assert.match(
      error({ id: '5-issue_refund-ffffffffffff', decision: 'approve' }, refundCall),
      /is not what awaits approval \(pending: 4-issue_refund-0123456789ab\)/,
    );
    assert.match(
      error({ id: refundCall.id, decision: 'approve', tool: 'get_user_profile' }, refundCall),
      /does not match/,
    );
    assert.match(
      error({ id: refundCall.id, decision: 'approve', args_hash: 'ffffffffffff' }, refundCall),
      /do not match/,
    );
    assert.match(
      error({ id: refundCall.id, decision: 'approve', amount_usd: 48.99 }, refundCall),
      /amount 48.99 does not match/,
    );
  });

  it('rejects malformed answers', () => {
    assert.match(error(null, refundCall), /must be an object/);
    assert.match(error({ decision: 'approve' }, refundCall), /needs the id/);
    assert.match(error({ id: refundCall.id, decision: 'maybe' }, refundCall), /decision must be one of/);
    assert.match(error({ id: refundCall.id, decision: 'approve', admin: true }, refundCall), /unknown field/);
    assert.match(error({ id: refundCall.id, decision: 'reject', reason: 'x'.repeat(5000) }, refundCall), /at most/);
  });

  it('takes a free-text answer only for an escalation', () => {
    assert.match(
      error({ id: refundCall.id, decision: 'answer', text: 'sure' }, refundCall),
      /only an escalation takes an answer/,
    );
    assert.match(error({ id: escalation.id, decision: 'answer' }, escalation), /needs visible text/);
    for (const invisible of ['   ', '\u200b\u200b', '\u2800', '\u3164', '\u0301'])
      assert.match(error({ id: escalation.id, decision: 'answer', text: invisible }, escalation), /needs visible text/);
    assert.equal(
      checkApprovalAnswer({ id: escalation.id, decision: 'answer', text: 'offer a coupon' }, escalation, none).ok,
      true,
    );
    assert.equal(checkApprovalAnswer({ id: escalation.id, decision: 'approve' }, escalation, none).ok, true);
  });

  it('treats a repeated answer as a harmless duplicate, and a contradicting one as an error', () => {
    const answered = new Map([
      [refundCall.id, { pending: refundCall, answer: { id: refundCall.id, decision: 'approve' as const } }],
    ]);
    const again = checkApprovalAnswer({ id: refundCall.id, decision: 'approve' }, undefined, answered);
    assert.equal(again.ok && again.duplicate, true);
    assert.match(error({ id: refundCall.id, decision: 'reject' }, undefined, answered), /already answered: approve/);
  });

  it('turns a rejection or an answer into an observation the model sees', () => {
    assert.deepEqual(personObservation(refundCall, { id: refundCall.id, decision: 'reject', reason: ' too much ' }), {
      tool: 'issue_refund',
      ok: false,
      data: { rejected: 'too much' },
      source: 'operator',
      bytes: 23,
      truncated: false,
    });
    const answered = personObservation(escalation, { id: escalation.id, decision: 'answer', text: 'Offer 10%' });
    assert.deepEqual([answered.tool, answered.ok, answered.data], ['escalate', true, { answer: 'Offer 10%' }]);
  });
});

describe('escalate action', () => {
  it('is accepted, strict like the others', () => {
    assert.deepEqual(validateAction('{"kind":"escalate","reason":"  needs a person "}'), {
      ok: true,
      action: { kind: 'escalate', reason: 'needs a person' },
    });
  });
  for (const [reason, text] of [
    ['missing_reason', '{"kind":"escalate"}'],
    ['missing_reason', '{"kind":"escalate","reason":"  "}'],
    ['missing_reason', '{"kind":"escalate","reason":7}'],
    ['extra_keys', '{"kind":"escalate","reason":"x","to":"boss"}'],
  ] as const) {
    it(`rejects ${text} as invalid_action:${reason}`, () => {
      const r = validateAction(text);
      assert.equal(r.ok ? null : r.reason, reason);
    });
  }
});
