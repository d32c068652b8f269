import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateAction } from '../../common/contract';

describe('action contract', () => {
  const invalid: Array<[string, string, string]> = [
    ['bad_json', 'not json at all', 'prose instead of JSON'],
    ['bad_json', '{"kind":"tool",', 'truncated JSON'],
    ['not_object', '[1,2,3]', 'an array'],
    ['not_object', '"final"', 'a string'],
    ['not_object', 'null', 'null'],
    ['bad_kind', '{"kind":"shell","cmd":"rm -rf /"}', 'an unknown kind'],
    ['bad_kind', '{"answer":"hi"}', 'no kind'],
    ['extra_keys', '{"kind":"final","answer":"ok","confidence":0.9}', 'final with an extra key'],
    ['extra_keys', '{"kind":"tool","name":"search_policy","args":{},"thought":"x"}', 'tool with an extra key'],
    ['extra_keys', '{"kind":"final","answer":"","extra":1}', 'extra keys win over a missing answer'],
    ['missing_answer', '{"kind":"final"}', 'final without answer'],
    ['missing_answer', '{"kind":"final","answer":"   "}', 'blank answer'],
    ['missing_answer', '{"kind":"final","answer":42}', 'non-string answer'],
    ['missing_tool_name', '{"kind":"tool","args":{}}', 'tool without name'],
    ['missing_tool_name', '{"kind":"tool","name":"","args":{}}', 'empty name'],
    ['bad_args', '{"kind":"tool","name":"search_policy","args":"refund"}', 'string args'],
    ['bad_args', '{"kind":"tool","name":"search_policy","args":[1]}', 'array args'],
  ];
  for (const [reason, text, what] of invalid) {
    it(`rejects ${what} as invalid_action:${reason}`, () => {
      const result = validateAction(text);
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.reason, reason);
    });
  }

  it('accepts a tool action and defaults missing or null args to {}', () => {
    assert.deepEqual(validateAction('{"kind":"tool","name":"get_user_profile","args":{"user_id":42}}'), {
      ok: true,
      action: { kind: 'tool', name: 'get_user_profile', args: { user_id: 42 } },
    });
    assert.deepEqual(validateAction('{"kind":"tool","name":"x"}'), {
      ok: true,
      action: { kind: 'tool', name: 'x', args: {} },
    });
    assert.deepEqual(validateAction('{"kind":"tool","name":"x","args":null}'), {
      ok: true,
      action: { kind: 'tool', name: 'x', args: {} },
    });
  });

  it('accepts a final action and trims the answer', () => {
    assert.deepEqual(validateAction('{"kind":"final","answer":"  Yes, USD 49.  "}'), {
      ok: true,
      action: { kind: 'final', answer: 'Yes, USD 49.' },
    });
  });
});
