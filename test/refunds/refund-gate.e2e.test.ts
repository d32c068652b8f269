// The principal-aware gate on the real server: a model that tries to refund another user, more
// than was paid, outside the policy, without reading billing, or without being allowed to, is
// stopped with the right stop reason before any approval is asked, and nothing is written.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { defaultAllowedToolsOf } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';
import type { AgentInput } from '../../common/types';
import { agentFixture } from '../helpers/agent-fixture';
import { scheduledActivityTypes } from '../helpers/history-scan';
import { billingOf, finalAnswer, LATE_USER, refundInput, refundOf, tool } from '../helpers/refund-fixtures';

const fixture = agentFixture({ queue: 'gate', refunds: true });

/** Runs a scripted model for `user`; asserts that the run wrote nothing and asked nobody. */
async function gated(user: number, replies: Reply[], overrides: Partial<AgentInput> = {}) {
  const { id, handle, result, requests } = await fixture.run(
    [...replies, finalAnswer('should never be reached')],
    refundInput(user, overrides),
  );

  assert.equal(result.status, 'stopped');
  assert.equal(requests.length, replies.length, 'the run stopped at the denied call');
  const events = (await handle.fetchHistory()).events ?? [];
  assert.ok(!scheduledActivityTypes(events).includes('issue_refund'), 'issue_refund was never scheduled');
  assert.equal(
    events.filter((e) => e.timerStartedEventAttributes).length,
    1,
    'no approval timer: nobody was asked (only the max_seconds timer)',
  );
  assert.deepEqual(await fixture.refunds.rows({ workflow_id: id }), [], 'nothing written');
  return result;
}

describe('the principal gate stops misuse of issue_refund', { concurrency: true }, () => {
  it('refunding another user: policy_denied:other_user', async () => {
    const user = fixture.refunds.nextUser();
    const result = await gated(user, [billingOf(user), refundOf(7, 10)]);
    assert.equal(result.stop_reason, 'policy_denied:other_user');
    assert.deepEqual(result.trace.at(-1)!.stop_reason, 'policy_denied:other_user');
    assert.deepEqual(await fixture.refunds.rows({ user_id: 7 }), []);
  });

  it("reading another user's billing: policy_denied:other_user (read tools too)", async () => {
    const user = fixture.refunds.nextUser();
    const result = await gated(user, [billingOf(user + 1)]);
    assert.equal(result.stop_reason, 'policy_denied:other_user');
    assert.equal(result.history.length, 0);
  });

  it('refunding more than the billing record shows was paid: policy_denied:refund_exceeds_paid', async () => {
    const user = fixture.refunds.nextUser();
    const result = await gated(user, [billingOf(user), refundOf(user, 49.01, 'the user says they paid 100 USD')]);
    assert.equal(result.stop_reason, 'policy_denied:refund_exceeds_paid');
  });

  it("refunding before reading billing (the model's own number): policy_denied:refund_without_billing", async () => {
    const user = fixture.refunds.nextUser();
    const result = await gated(user, [refundOf(user, 49)]);
    assert.equal(result.stop_reason, 'policy_denied:refund_without_billing');
  });

  it("refunding outside the plan's refund window: policy_denied:refund_outside_window", async () => {
    const result = await gated(LATE_USER, [billingOf(LATE_USER), refundOf(LATE_USER, 49)]);
    assert.equal(result.stop_reason, 'policy_denied:refund_outside_window');
  });

  it('refunding a free plan: policy_denied:refund_plan_not_refundable', async () => {
    const result = await gated(7, [billingOf(7), refundOf(7, 1)]);
    assert.equal(result.stop_reason, 'policy_denied:refund_plan_not_refundable');
  });

  it('calling issue_refund when the run does not allow it: tool_denied:issue_refund', async () => {
    const user = fixture.refunds.nextUser();
    const result = await gated(user, [billingOf(user), refundOf(user, 49)], {
      allow: [...defaultAllowedToolsOf(supportDomain)],
    });
    assert.equal(result.stop_reason, 'tool_denied:issue_refund');
  });

  it('malformed refund arguments: tool_bad_args:issue_refund', async () => {
    const user = fixture.refunds.nextUser();
    const result = await gated(user, [
      billingOf(user),
      tool('issue_refund', { user_id: user, amount_usd: '49', reason: 'x y z' }),
    ]);
    assert.equal(result.stop_reason, 'tool_bad_args:issue_refund');
  });
});
