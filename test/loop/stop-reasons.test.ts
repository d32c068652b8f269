// Stop reasons come from one table: every reason the runtime can produce is in it with a family
// (the CLI's exit code) and a description (what the CLI prints), spelled as the action contract spells it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  INVALID_ACTION_KINDS,
  isStopReason,
  policyStop,
  STOP_REASON_KEYS,
  STOP_REASON_TABLE,
  stopReasonDescription,
  stopReasonFamily,
  toolNamedReason,
  toolStop,
} from '../../common/stop-reasons';

describe('the stop reason table', () => {
  it("keeps the contract's spellings", () => {
    for (const key of [
      'success',
      'max_steps',
      'max_tool_calls',
      'max_seconds',
      'llm_timeout',
      'loop_detected',
      'tool_denied',
      'tool_missing',
      'tool_bad_args',
      'tool_error',
      'invalid_action:not_object',
      'invalid_action:bad_json',
      'invalid_action:bad_kind',
      'invalid_action:extra_keys',
      'invalid_action:missing_answer',
      'invalid_action:missing_tool_name',
      'invalid_action:bad_args',
    ])
      assert.ok(STOP_REASON_KEYS.includes(key as never), key);
  });

  it('derives the invalid-action kinds the contract reports', () => {
    assert.ok(INVALID_ACTION_KINDS.includes('too_large'));
    assert.ok(INVALID_ACTION_KINDS.every((kind) => isStopReason(`invalid_action:${kind}`)));
    assert.equal(INVALID_ACTION_KINDS.length, STOP_REASON_KEYS.filter((k) => k.startsWith('invalid_action:')).length);
  });

  it('gives every reason a family: success, stopped, cancelled or failed', () => {
    assert.equal(stopReasonFamily('success'), 'success');
    assert.equal(stopReasonFamily('cancelled'), 'cancelled');
    for (const reason of ['max_steps', 'max_tokens', 'loop_detected', 'approval_timeout', 'invalid_action:bad_json'])
      assert.equal(stopReasonFamily(reason), 'stopped', reason);
    assert.equal(stopReasonFamily(policyStop('other_user')), 'stopped');
    assert.equal(stopReasonFamily(toolStop.denied('x')), 'stopped');
    for (const reason of ['llm_timeout', 'llm_error', toolStop.error('search_policy')])
      assert.equal(stopReasonFamily(reason), 'failed', reason);
    for (const text of ['', 'oops', 'tool_denied', 'tool_denied:', 'invalid_action:whatever', 'success:x'])
      assert.equal(stopReasonFamily(text), undefined, text);
  });

  it('describes each reason in one line, naming the tool or rule of a parametrised one', () => {
    for (const key of STOP_REASON_KEYS) {
      const description = STOP_REASON_TABLE[key].description;
      assert.ok(description.length > 0 && !description.includes('\n'), key);
    }
    assert.equal(stopReasonDescription('max_steps'), 'the step budget (--max-steps) ran out');
    assert.equal(stopReasonDescription('tool_error:search_policy'), 'the tool failed on every attempt: search_policy');
    assert.equal(stopReasonDescription('not a reason'), 'not a reason');
  });

  it('splits only the reasons that carry a model-chosen tool name', () => {
    assert.deepEqual(toolNamedReason('tool_missing:drop_tables'), { key: 'tool_missing', tool: 'drop_tables' });
    assert.equal(toolNamedReason('policy_denied:other_user'), undefined);
    assert.equal(toolNamedReason('invalid_action:bad_json'), undefined);
    assert.equal(toolNamedReason('success'), undefined);
  });
});
