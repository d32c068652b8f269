// Found by an adversary: the Web UI's current details and the AgentGoal column show model and operator text
// "escaped, one line" (docs/observability.md). This project already counts bidi overrides and
// control characters as hostile where text reaches a terminal (cli/terminal-text.ts): an RTL
// override reorders what is shown against what is there. They pass into the details and AgentGoal
// untouched, so an escalation reason with U+202E shows the command after it (`agent answer ID TEXT`)
// reversed, and a goal with ESC sequences reaches `temporal workflow describe` in a terminal raw.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveBudget } from '../../common/cost/budget';
import type { PendingApproval } from '../../common/conversation/approvals';
import { goalAttribute } from '../../common/temporal/search-attributes';
import { phaseDetails } from '../../workflows/reporting/run-details';
import { runSummary } from '../../client/run-summary';

/** Bidi embeddings, overrides, isolates and marks; C0 controls; DEL and C1. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const HOSTILE = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

const usage = {
  steps: 2,
  tool_calls: 1,
  llm_calls: 2,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  elapsed_ms: 0,
};

describe('hostile characters in the current details and AgentGoal', () => {
  it("an escalation reason's RTL override and ESC do not reach the current details", () => {
    const pending: PendingApproval = {
      id: '2-escalate',
      kind: 'escalation',
      step: 2,
      reason: 'refund approved by manager \u202E \u001b[8m',
      requested_at: '2026-12-04T00:00:00.000Z',
      expires_at: '2026-12-04T01:00:00.000Z',
    } as PendingApproval;
    const details = phaseDetails({
      phase: 'awaiting_approval',
      tool: 'escalate',
      usage,
      budget: resolveBudget({ max_steps: 8 }),
      workflowId: 'run-1',
      principal: '42',
      pending,
    });
    assert.doesNotMatch(details, HOSTILE, JSON.stringify(details));
  });

  it("a goal's RTL override and ESC sequence do not reach AgentGoal", () => {
    const value = goalAttribute('Refund user 42 \u202Eevil\u202C and \u001b]0;owned\u0007 done');
    assert.doesNotMatch(value, HOSTILE, JSON.stringify(value));
  });

  it("a goal's bare URL is not a link on the run page (the current details escape ':' and '.' for this)", () => {
    const { staticSummary, staticDetails } = runSummary({
      goal: 'Tell the customer to log in at https://evil.example/login first',
      principal: '42',
      allow: [],
    });
    // The Web UI 2.42 shows a bare https:// address in the Summary and Details as a clickable link
    // (seen with `temporal workflow start --static-summary` and Chromium); the current details escape ':'.
    for (const text of [staticSummary, staticDetails]) assert.doesNotMatch(text, /https:\/\//, text);
  });

  it("a goal's RTL override does not reach the run list's summary", () => {
    const { staticSummary } = runSummary({ goal: 'Refund \u202Eevil', principal: '42', allow: [] });
    assert.doesNotMatch(staticSummary, HOSTILE, JSON.stringify(staticSummary));
  });
});
