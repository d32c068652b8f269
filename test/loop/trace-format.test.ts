// How a finished step prints (agent status, result, watch, chat): a write the customer declined or
// could not be shown is not a failure, and a repeat says it was answered from an earlier step.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { formatTraceEntry } from '../../cli/format';

describe('formatTraceEntry', () => {
  it('prints a write the customer declined as declined, not as a failure', () => {
    const line = formatTraceEntry({
      step: 4,
      tool: 'cancel_pending_order',
      args_hash: 'abc',
      ok: false,
      consent: 'declined',
    });
    assert.equal(line, 'step 4: cancel_pending_order (abc) declined by the customer (not made)');
    assert.doesNotMatch(line, /failed|stopped/);
  });

  it('prints a write that could not be shown whole as not asked', () => {
    const line = formatTraceEntry({
      step: 5,
      tool: 'modify_user_address',
      args_hash: 'def',
      ok: false,
      consent: 'not_asked',
    });
    assert.match(line, /not asked: .* \(not made\)$/);
    assert.doesNotMatch(line, /failed|stopped/);
  });

  it('still prints a declined write that ended the run with its stop reason', () => {
    const line = formatTraceEntry({
      step: 6,
      tool: 'cancel_pending_order',
      args_hash: 'abc',
      ok: false,
      consent: 'declined',
      stop_reason: 'max_steps',
    });
    assert.match(line, /stopped: max_steps$/);
  });

  it('prints a repeat as answered from its earlier step', () => {
    const line = formatTraceEntry({ step: 7, tool: 'get_order_details', args_hash: '123', ok: true, repeat_of: 3 });
    assert.equal(
      line,
      'step 7: get_order_details (123) ok (a repeat of step 3: answered from it, the tool not called)',
    );
  });
});
