// Native tool calling: the answer's tool call mapped onto the action contract, which the workflow
// validates as it does a JSON-mode answer (docs/model-protocol.md).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import { actionTextOf, strictAllowed, toolsFor } from '../../activities/decide/native-tools';
import type { AnswerMessage } from '../../activities/decide/native-tools';
import { validateAction } from '../../common/contract';
import { functionNames } from '../../common/model-view/model-view';
import { catalogFor, registryOf } from '../../common/tools/tool-catalog';
import { DOMAINS } from '../../domains/index';

const names = functionNames(['get_user_profile', 'fs.write_file']);
const byFunction = new Map([...names].map(([tool, fn]) => [fn, tool]));
const call = (name: string, args: string): AnswerMessage => ({
  content: null,
  tool_calls: [{ type: 'function', function: { name, arguments: args } }],
});
const action = (message: AnswerMessage, conversation = false) => {
  const text = actionTextOf(message, byFunction, conversation);
  assert.ok(text !== undefined);
  return validateAction(text, { summary: true, message: conversation });
};

describe('native tool calling: the answer as an action', () => {
  it('a tool call is a tool action, under the tool name its function stands for', () => {
    assert.deepEqual(action(call('get_user_profile', '{"user_id":42}')), {
      ok: true,
      action: { kind: 'tool', name: 'get_user_profile', args: { user_id: 42 } },
    });
    assert.deepEqual(action(call('fs_write_file', '{"path":"a"}')), {
      ok: true,
      action: { kind: 'tool', name: 'fs.write_file', args: { path: 'a' } },
    });
  });

  it('final_answer is a final answer, escalate an escalation', () => {
    assert.deepEqual(action(call('final_answer', '{"answer":" Yes "}')), {
      ok: true,
      action: { kind: 'final', answer: 'Yes' },
    });
    assert.deepEqual(action(call('escalate', '{"reason":"a person must decide"}')), {
      ok: true,
      action: { kind: 'escalate', reason: 'a person must decide' },
    });
  });

  it('text without a call: a message in a conversation, a final answer otherwise; nothing at all: no answer', () => {
    assert.deepEqual(action({ content: 'Which order?' }, true), {
      ok: true,
      action: { kind: 'message', text: 'Which order?' },
    });
    assert.deepEqual(action({ content: 'Done.' }, false), { ok: true, action: { kind: 'final', answer: 'Done.' } });
    assert.equal(actionTextOf({ content: '  ', tool_calls: [] }, byFunction, true), undefined);
    assert.equal(actionTextOf({ content: null }, byFunction, false), undefined);
  });

  it('several calls in one answer: the first is the step, the others are not made', () => {
    const two: AnswerMessage = {
      content: 'text alongside is not sent',
      tool_calls: [
        { type: 'function', function: { name: 'get_user_profile', arguments: '{"user_id":1}' } },
        { type: 'function', function: { name: 'final_answer', arguments: '{"answer":"x"}' } },
      ],
    };
    assert.deepEqual(action(two, true), {
      ok: true,
      action: {
        kind: 'tool',
        name: 'get_user_profile',
        args: { user_id: 1 },
        decision_summary: 'text alongside is not sent',
      },
    });
  });

  it("text beside a call is the step's decision_summary (its first line), never a message", () => {
    const withText = (content: string, name: string, args: string): AnswerMessage => ({
      content,
      tool_calls: [{ type: 'function', function: { name, arguments: args } }],
    });
    assert.deepEqual(action(withText('Let me look that up.\nMore words.', 'get_user_profile', '{"user_id":7}'), true), {
      ok: true,
      action: {
        kind: 'tool',
        name: 'get_user_profile',
        args: { user_id: 7 },
        decision_summary: 'Let me look that up.',
      },
    });
    const long = action(withText('x'.repeat(500), 'final_answer', '{"answer":"Done."}'));
    assert.ok(long.ok && long.action.kind === 'final' && long.action.decision_summary!.length <= 160);
    assert.deepEqual(action(withText('  ', 'escalate', '{"reason":"r"}')), {
      ok: true,
      action: { kind: 'escalate', reason: 'r' },
    });
  });

  it('malformed calls map onto the invalid_action reasons', () => {
    const reason = (m: AnswerMessage) => {
      const r = action(m);
      return r.ok ? 'ok' : r.reason;
    };
    assert.equal(reason(call('get_user_profile', 'user 42')), 'bad_args');
    assert.equal(reason(call('get_user_profile', '[42]')), 'bad_args');
    assert.equal(reason(call('get_user_profile', '42')), 'bad_args');
    assert.equal(reason(call('', '{}')), 'missing_tool_name');
    assert.equal(reason(call('final_answer', '{}')), 'missing_answer');
    assert.equal(reason(call('final_answer', '"Yes"')), 'missing_answer');
    assert.equal(reason(call('final_answer', '{"answer":"Yes","confidence":1}')), 'extra_keys');
    assert.equal(reason(call('escalate', '{"reason":""}')), 'missing_reason');
    assert.equal(reason(call('get_user_profile', '['.repeat(40) + ']'.repeat(40))), 'too_deep');
  });

  // Found by the adversary: each of these ended the run llm_error (retried as no answer).
  it('a null among the calls is skipped; text as a list of parts is its text', () => {
    const withNull = {
      content: null,
      tool_calls: [null, { type: 'function', function: { name: 'get_user_profile', arguments: '{"user_id":7}' } }],
    } as unknown as AnswerMessage;
    assert.deepEqual(action(withNull), {
      ok: true,
      action: { kind: 'tool', name: 'get_user_profile', args: { user_id: 7 } },
    });
    const parts = {
      content: [
        { type: 'text', text: 'Which ' },
        { type: 'text', text: 'order?' },
      ],
    } as AnswerMessage;
    assert.deepEqual(action(parts, true), { ok: true, action: { kind: 'message', text: 'Which order?' } });
    assert.deepEqual(action(parts, false), { ok: true, action: { kind: 'final', answer: 'Which order?' } });
    assert.equal(actionTextOf({ content: [{ type: 'image_url' }], tool_calls: [null] }, byFunction, true), undefined);
  });

  it("a refusal (content null, refusal text) is the model's answer in words: a message in a conversation, a final answer otherwise", () => {
    const refusal: AnswerMessage = { content: null, refusal: 'I am sorry, I cannot help with that.' };
    assert.equal(
      actionTextOf(refusal, byFunction, true),
      JSON.stringify({ kind: 'message', text: 'I am sorry, I cannot help with that.' }),
    );
    assert.equal(
      actionTextOf(refusal, byFunction, false),
      JSON.stringify({ kind: 'final', answer: 'I am sorry, I cannot help with that.' }),
    );
    assert.equal(actionTextOf({ content: null, refusal: null }, byFunction, true), undefined);
  });

  it('arguments that are not a JSON text (an object in its place) are bad_args', () => {
    const objectArgs: AnswerMessage = {
      content: null,
      tool_calls: [{ type: 'function', function: { name: 'get_user_profile', arguments: { user_id: 7 } } }],
    };
    const result = action(objectArgs);
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.reason, 'bad_args');
  });

  it('any answer at all maps without throwing, onto an action or an invalid_action reason', () => {
    const anyArgs = fc.oneof(fc.string(), fc.json({ maxDepth: 6 }), fc.constant('['.repeat(5000)));
    const anyCall = fc.record({
      type: fc.option(fc.constantFrom('function', 'other'), { nil: undefined }),
      function: fc.option(
        fc.record({
          name: fc.oneof(fc.constantFrom('final_answer', 'escalate', 'get_user_profile', '', '__proto__'), fc.string()),
          arguments: fc.oneof(anyArgs, fc.anything()),
        }),
        { nil: undefined },
      ),
    });
    // Any shape a server may send: text parts, nulls among the calls, anything in either place.
    const part = fc.oneof(fc.record({ type: fc.constant('text'), text: fc.string() }), fc.string(), fc.anything());
    const message = fc.record(
      {
        content: fc.oneof(fc.string(), fc.constant(null), fc.array(part, { maxLength: 3 }), fc.anything()),
        tool_calls: fc.oneof(
          fc.constant(null),
          fc.array(fc.oneof(anyCall, fc.constant(null), fc.anything()), { maxLength: 3 }),
          fc.anything(),
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(message, fc.boolean(), (m, conversation) => {
        const text = actionTextOf(m as AnswerMessage, byFunction, conversation);
        // No answer only when there is neither an object among the calls nor any text.
        const calls: unknown[] = Array.isArray(m.tool_calls) ? m.tool_calls : [];
        const someCall = calls.some((c) => typeof c === 'object' && c !== null);
        if (text === undefined) {
          assert.ok(!someCall, JSON.stringify(m));
          return;
        }
        const result = validateAction(text, { message: conversation });
        assert.ok(result.ok || typeof result.reason === 'string');
      }),
      { numRuns: 500 },
    );
  });
});

describe('native tool calling: the tools offered', () => {
  it("every tool of both domains goes with its schema, strict where OpenAI's strict mode allows it", () => {
    for (const domain of Object.values(DOMAINS)) {
      const registry = registryOf(domain.tools);
      const catalog = catalogFor(Object.keys(registry), registry);
      const tools = toolsFor(catalog, functionNames(catalog.map((c) => c.name)), false);
      assert.deepEqual(
        tools.map((t) => t.function.name),
        [...catalog.map((c) => c.name), 'final_answer', 'escalate'],
      );
      for (const tool of tools) {
        assert.equal(tool.function.parameters.$schema, undefined);
        assert.equal(tool.function.strict === true, strictAllowed(tool.function.parameters));
      }
    }
  });

  it('strict only for closed objects whose every property is required, with supported keywords', () => {
    const closed = {
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
      additionalProperties: false,
    };
    assert.equal(strictAllowed(closed), true);
    assert.equal(strictAllowed({ ...closed, required: [] }), false);
    assert.equal(strictAllowed({ ...closed, additionalProperties: true }), false);
    assert.equal(strictAllowed({ ...closed, properties: { a: { type: 'string', minLength: 1 } } }), false);
  });

  it("function names: OpenAI's alphabet, unique, never a runtime function's", () => {
    const n = functionNames(['a.b', 'a_b', 'final_answer', 'escalate', 'x'.repeat(80)]);
    assert.deepEqual([...n.values()], ['a_b', 'a_b_2', 'final_answer_2', 'escalate_2', 'x'.repeat(64)]);
  });
});
