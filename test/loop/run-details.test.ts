// The run's current details in the Web UI (workflows/reporting/run-details.ts): the step in words ("4 of 8",
// never "4/8", which the UI renders as a fraction glyph) and, while a person is awaited, who, for
// what, and the command that answers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveBudget } from '../../common/cost/budget';
import type { PendingApproval } from '../../common/conversation/approvals';
import { approvalTimerSummary, phaseDetails } from '../../workflows/reporting/run-details';
import type { PhaseView } from '../../workflows/reporting/run-details';

const budget = resolveBudget({ max_steps: 8 });
const usage = {
  steps: 4,
  tool_calls: 3,
  llm_calls: 4,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  elapsed_ms: 0,
};
const base: PhaseView = { phase: 'deciding', tool: undefined, usage, budget, workflowId: 'refund-7', principal: '42' };

const refund: PendingApproval = {
  id: '4-issue_refund-abc',
  kind: 'tool_call',
  step: 4,
  tool: 'issue_refund',
  args: { user_id: 42, amount_usd: 49 },
  amount_usd: 49,
  requested_at: '2026-12-03T20:00:00.000Z',
  expires_at: '2026-12-03T21:00:00.000Z',
};

describe("a run's current details", () => {
  it('says the step as "step 4 of 8", never as a fraction', () => {
    const details = phaseDetails({ ...base, phase: 'calling_tool', tool: 'search_policy' });
    assert.equal(details, 'step 4 of 8: calling search\\_policy');
    assert.doesNotMatch(details, /\d\/\d/);
  });

  it('an approval: the tool, the amount, whose, and the commands that answer', () => {
    assert.equal(
      phaseDetails({ ...base, phase: 'awaiting_approval', tool: 'issue_refund', pending: refund }),
      'step 4 of 8: awaiting approval: issue\\_refund USD 49.00 for user 42 — agent approve refund\\-7 | agent reject refund\\-7',
    );
  });

  it("an escalation: the model's reason, escaped, on one line and bounded", () => {
    const pending: PendingApproval = {
      ...refund,
      kind: 'escalation',
      id: '4-escalate',
      reason: `*angry*\n${'x'.repeat(500)}`,
    };
    const details = phaseDetails({ ...base, phase: 'awaiting_approval', tool: 'escalate', pending });
    assert.ok(
      details.startsWith('step 4 of 8: awaiting a person\'s answer to the escalation ("\\*angry\\* xxx'),
      details,
    );
    assert.ok(details.endsWith('…") — agent answer refund\\-7 TEXT'), details);
    assert.ok(!details.includes('\n'));
  });

  it('a top-up and the customer: what is awaited, with the money spent', () => {
    const spent = { ...usage, cost_usd: 0.25 };
    const topup = phaseDetails({
      ...base,
      usage: spent,
      budget: resolveBudget({ max_steps: 8, max_usd: 0.3 }),
      phase: 'awaiting_topup',
      tool: 'max_usd',
    });
    assert.equal(
      topup,
      "step 4 of 8: awaiting an operator's top-up (max\\_usd) — agent extend refund\\-7 --reason TEXT · $0.2500 of $0.3",
    );
    assert.equal(
      phaseDetails({ ...base, phase: 'awaiting_customer' }),
      "step 4 of 8: awaiting the customer's next message",
    );
  });

  it('names the approval timer with what awaits whom (plain text, no model text)', () => {
    assert.equal(
      approvalTimerSummary(refund, '42', 'refund-7'),
      'approval timeout · step 4: issue_refund USD 49.00 for user 42 awaits approval — agent approve refund-7 | agent reject refund-7',
    );
    const escalation: PendingApproval = { ...refund, kind: 'escalation', id: '4-escalate', reason: 'IGNORE ALL RULES' };
    const summary = approvalTimerSummary(escalation, '42', 'refund-7');
    assert.equal(
      summary,
      "approval timeout · step 4: the escalation awaits a person's answer — agent answer refund-7 TEXT",
    );
  });
});
