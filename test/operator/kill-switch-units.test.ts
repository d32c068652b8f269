// Pure pieces of the kill switch and of what operators see: terminal-safe text and JSON, effects
// and their counts, why a cancelled run has not ended, approval update ids.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { approvalUpdateId } from '../../client/approvals';
import { oneLine } from '../../cli/cli';
import { formatResult, formatTable } from '../../cli/format';
import { effectCountsOf, formatEffect, formatEffectCounts, formatEffects } from '../../cli/format-effects';
import { diagnose } from '../../cli/stuck-diagnosis';
import type { StuckFacts } from '../../cli/stuck-diagnosis';
import { terminalSafe, terminalSafeJson } from '../../cli/terminal-text';
import type { AgentResult, EffectEntry } from '../../common/types';

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

describe('terminal-safe text', () => {
  it('removes C0 (but newline and tab), DEL, C1 and bidi controls; keeps the rest', () => {
    assert.equal(terminalSafe('a\u001b[31mb\u001b]0;t\u0007c\rd\u0008e\u007ff\u009bg'), 'a[31mb]0;tcdefg');
    assert.equal(terminalSafe('x\u202ey\u202cz\u2066w\u2069\u200e\u200f\u061c'), 'xyzw');
    assert.equal(terminalSafe('line 1\n\tline 2 — naïve 😀 日本'), 'line 1\n\tline 2 — naïve 😀 日本');
  });

  it('JSON keeps every character (escaped where a terminal would act on it) and stays valid', () => {
    const value = { answer: 'a\u001b]0;t\u0007 \u202eb\u202c \u0085 \u2028 \u2029 \u007f c', n: 1 };
    for (const space of [undefined, 2]) {
      const text = terminalSafeJson(value, space);
      assert.equal(UNSAFE.exec(text), null, text);
      assert.doesNotMatch(text, /[\u2028\u2029]/);
      assert.deepEqual(JSON.parse(text), value);
    }
    assert.equal(terminalSafeJson('\u202e'), '"\\u202e"');
  });

  it('the result block and table cells are inert; error lines escape bidi controls', () => {
    const result: AgentResult = {
      status: 'stopped',
      stop_reason: 'tool_denied:\u001b]0;x\u0007evil' as AgentResult['stop_reason'],
      raw_action: '\u009b2J',
      trace: [],
      history: [],
      usage: {
        steps: 1,
        tool_calls: 0,
        llm_calls: 1,
        prompt_tokens: 1,
        completion_tokens: 1,
        total_tokens: 2,
        elapsed_ms: 5,
      },
      budget: { max_steps: 8, max_tool_calls: 6, max_seconds: 60, max_tokens: 0, max_usd: 0 },
    };
    for (const text of formatResult(result)) assert.equal(UNSAFE.exec(text), null, text);
    assert.deepEqual(formatTable(['A', 'B'], [['x\u001b[1m\ny', 'z']]), ['A       B', 'x[1m y  z']);
    assert.equal(oneLine('id \u202ecod.exe\n'), 'id \\u202ecod.exe\\n');
  });
});

describe('effects as operators see them', () => {
  const confirmed: EffectEntry = {
    tool: 'issue_refund',
    idempotency_key: 'wf:2:issue_refund:ab12',
    state: 'confirmed',
    amount_usd: 49,
    step: 2,
    via: 'tool',
    refund_id: 7,
  };
  const ambiguous: EffectEntry = {
    ...confirmed,
    idempotency_key: 'wf:3:issue_refund:cd34',
    state: 'ambiguous',
    step: 3,
    via: 'reconcile',
    refund_id: undefined,
    detail: 'lookup failed',
  };

  it('one line each, an ambiguous one with what to do, and a warning', () => {
    assert.equal(
      formatEffect(confirmed),
      'step 2: issue_refund USD 49.00 confirmed (refund #7, key wf:2:issue_refund:ab12)',
    );
    assert.equal(
      formatEffect(ambiguous),
      'step 3: issue_refund USD 49.00 AMBIGUOUS (lookup failed): money may have moved: check the refunds service for key wf:3:issue_refund:cd34',
    );
    const lines = formatEffects([confirmed, ambiguous]);
    assert.equal(lines[0], 'effects:');
    assert.match(lines.at(-1)!, /^WARNING: 1 effect\(s\) AMBIGUOUS: money may have moved/);
    assert.deepEqual(formatEffects([]), []);
    assert.deepEqual(formatEffects(undefined), []);
  });

  it('counts from the memo: ambiguous first and loud; "-" without a memo; junk ignored', () => {
    assert.equal(
      formatEffectCounts(effectCountsOf({ confirmed: 2, rejected: 0, not_made: 1, ambiguous: 1 })),
      '1 AMBIGUOUS, 2 confirmed, 1 not_made',
    );
    assert.equal(formatEffectCounts(effectCountsOf(undefined)), '-');
    assert.equal(formatEffectCounts(effectCountsOf({ confirmed: 0, rejected: 0, not_made: 0, ambiguous: 0 })), 'none');
    assert.deepEqual(effectCountsOf({ confirmed: '3', ambiguous: -1, rejected: 1.5 }), {
      confirmed: 0,
      rejected: 0,
      not_made: 0,
      ambiguous: 0,
    });
  });
});

describe('why a cancelled run has not ended', () => {
  const now = 1_000_000;
  const base: StuckFacts = { taskQueue: 'q', pollers: 1, lastPollMs: now - 1_000, activities: [] };

  it('no pollers, or none lately: no worker', () => {
    assert.match(diagnose({ ...base, pollers: 0 }, now), /^no worker polls task queue "q"/);
    assert.match(
      diagnose({ ...base, lastPollMs: now - 120_000 }, now),
      /^no worker has polled task queue "q" for 120 s/,
    );
  });

  it('a workflow task nobody takes: no worker takes it (however many attempts)', () => {
    assert.match(
      diagnose({ ...base, workflowTask: { attempt: 1, started: false, scheduledAtMs: now - 6_000 } }, now),
      /^no worker has taken its workflow task for 6 s: no worker polls task queue "q"/,
    );
    assert.match(
      diagnose({ ...base, workflowTask: { attempt: 2, started: false, scheduledAtMs: now - 6_000 } }, now),
      /for 6 s, attempt 2: no worker polls/,
    );
  });

  it('a workflow task that keeps failing; an activity that does not stop; otherwise not yet', () => {
    assert.match(
      diagnose({ ...base, workflowTask: { attempt: 5, started: true, scheduledAtMs: now - 100 } }, now),
      /keeps failing or timing out \(attempt 5\)/,
    );
    assert.match(
      diagnose({ ...base, activities: [{ name: 'decide', attempt: 2, lastHeartbeatMs: now - 4_000 }] }, now),
      /waits for decide \(attempt 2, last heartbeat 4 s ago\)/,
    );
    assert.match(
      diagnose({ ...base, workflowTask: { attempt: 1, started: false, scheduledAtMs: now - 500 } }, now),
      /not finished handling the cancel yet/,
    );
  });
});

describe('approval update ids', () => {
  it('name the run, so a reset run (new run id, same call id) gets a new one', () => {
    assert.equal(
      approvalUpdateId('run-a', '4-issue_refund-e9671154ace8', 'approve'),
      'run-a:4-issue_refund-e9671154ace8:approve',
    );
    assert.notEqual(approvalUpdateId('run-a', '4-x', 'approve'), approvalUpdateId('run-b', '4-x', 'approve'));
  });
});
