// A conversation's pure parts (common/conversation/conversation.ts): what the `say` Update accepts, the
// transcript's bounds, what the model sees of it, and what continue-as-new carries.
import { validateParsedAction } from '../../common/contract';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  boundedMessage,
  checkSay,
  CONVERSATION_LIMITS,
  conversationForModel,
  EMPTY_TRANSCRIPT,
  unansweredOf,
  withTurn,
} from '../../common/conversation/conversation';
import type { SayContext, Transcript } from '../../common/conversation/conversation';
import { buildDecisionPayload } from '../../common/model-view/decision-payload';
import { checkAgentInput } from '../../common/input';
import { supportDomain } from '../../domains/support/index';
import { carryState } from '../../workflows/agent/carry';
import { agentInput } from '../helpers/harness';
import { CONVERSATION_SYSTEM_PROMPT, SYSTEM_PROMPT, systemPromptOf } from '../../activities/decide/system-prompt';
import { freshRunState } from '../helpers/run-state';

const OPEN: SayContext = { conversation: true, running: true, ended: false, unanswered: 0 };

describe('the say Update: what it accepts', () => {
  const rows: Array<[string, unknown, SayContext, RegExp | object]> = [
    ['a message', { text: '  where is my order?  ' }, OPEN, { text: 'where is my order?' }],
    ['a last message', { text: 'thanks, bye', end: true }, OPEN, { text: 'thanks, bye', end: true }],
    ['an ending without text', { end: true }, OPEN, { end: true }],
    ['end: false is a message', { text: 'hi', end: false }, OPEN, { text: 'hi' }],
    ['not a conversation', { text: 'hi' }, { ...OPEN, conversation: false }, /not a conversation/],
    ['the run has ended', { text: 'hi' }, { ...OPEN, running: false }, /the conversation has ended/],
    ['the customer has ended it', { text: 'hi' }, { ...OPEN, ended: true }, /already ended the conversation/],
    ['null', null, OPEN, /a message is an object/],
    ['an array', [{ text: 'hi' }], OPEN, /a message is an object/],
    ['a string', 'hi', OPEN, /a message is an object/],
    ['no text, no end', {}, OPEN, /needs visible text/],
    ['blank text', { text: ' \u200b\t' }, OPEN, /needs visible text/],
    ['blank text with end', { text: ' ', end: true }, OPEN, /needs visible text/],
    ['text that is no string', { text: 42 }, OPEN, /text must be a string of at most 4000/],
    ['text too long', { text: 'x'.repeat(4001) }, OPEN, /text must be a string of at most 4000/],
    ['end that is no boolean', { text: 'hi', end: 'yes' }, OPEN, /end must be true or false/],
    ['an unknown field', { text: 'hi', from: 'operator' }, OPEN, /unknown field\(s\) in the message: from/],
    ['__proto__', JSON.parse('{"text":"hi","__proto__":{"end":true}}'), OPEN, /unknown field/],
    ['too many unanswered', { text: 'hello?' }, { ...OPEN, unanswered: 5 }, /5 messages are waiting/],
    ['an ending is taken even then', { end: true }, { ...OPEN, unanswered: 5 }, { end: true }],
    ['seen that is no turn number', { text: 'hi', seen: -1 }, OPEN, /seen must be a turn number/],
    ['written after the question: an answer', { text: 'yes', seen: 3 }, { ...OPEN, question: 3 }, { text: 'yes' }],
    ['no question waits: seen changes nothing', { text: 'yes', seen: 0 }, OPEN, { text: 'yes' }],
    [
      'written before the consent question was shown: refused (issue 29 item 3)',
      { text: 'yes', seen: 2 },
      { ...OPEN, question: 3 },
      /written before the run asked for consent \(turn 3\)/,
    ],
    ['leaving is no consent: taken whenever written', { end: true, seen: 0 }, { ...OPEN, question: 3 }, { end: true }],
  ];
  for (const [name, raw, ctx, expected] of rows) {
    it(name, () => {
      const check = checkSay(raw, ctx);
      if (expected instanceof RegExp) {
        assert.equal(check.ok, false);
        if (!check.ok) assert.match(check.error, expected);
      } else assert.deepEqual(check, { ok: true, say: expected });
    });
  }
});

function talk(turns: number): Transcript {
  let t = EMPTY_TRANSCRIPT;
  for (let i = 0; i < turns; i++)
    t = withTurn(t, { from: i % 2 === 0 ? 'agent' : 'customer', text: `turn ${i + 1}`, step: i });
  return t;
}

describe('the transcript', () => {
  it('numbers every turn, keeps the last ones and counts them all', () => {
    const t = talk(300);
    assert.equal(t.turns.length, CONVERSATION_LIMITS.kept_turns);
    assert.equal(t.turns[0]!.n, 300 - CONVERSATION_LIMITS.kept_turns + 1);
    assert.deepEqual([t.total, t.agent_messages, t.customer_messages], [300, 150, 150]);
  });

  it('counts the customer messages the agent has not answered', () => {
    let t = talk(1);
    assert.equal(unansweredOf(t), 0);
    t = withTurn(t, { from: 'customer', text: 'a', step: 1 });
    t = withTurn(t, { from: 'customer', text: 'b', step: 1 });
    assert.equal(unansweredOf(t), 2);
    assert.equal(unansweredOf(withTurn(t, { from: 'agent', text: 'ok', step: 2 })), 0);
  });

  it('an ending turn ends it, for good', () => {
    const t = withTurn(withTurn(talk(2), { from: 'customer', text: '', step: 2, end: true }), {
      from: 'agent',
      text: 'late',
      step: 3,
    });
    assert.equal(t.ended, true);
  });

  it("cuts the agent's long or control-laden message", () => {
    assert.equal(Array.from(boundedMessage('y'.repeat(5000))).length, CONVERSATION_LIMITS.text_chars);
    assert.equal(boundedMessage('a\u001b[2Jb\nc'), 'a [2Jb\nc');
  });
});

describe('what the model sees of a conversation', () => {
  it('the last turns and the counts: the payload does not grow with the conversation', () => {
    const input = agentInput();
    const payload = (turns: number) =>
      buildDecisionPayload(input.goal, input.principal, [], input.allow, supportDomain, talk(turns));
    const short = payload(CONVERSATION_LIMITS.shown_turns);
    const long = payload(1000);
    assert.equal(long.conversation!.turns.length, CONVERSATION_LIMITS.shown_turns);
    assert.equal(long.conversation!.total_turns, 1000);
    assert.equal(long.conversation!.turns.at(-1)!.text, 'turn 1000');
    // Same turn texts' lengths within a few digits: the size is bounded, not proportional.
    assert.ok(JSON.stringify(long).length - JSON.stringify(short).length < 100);
  });

  it('a run that is not a conversation has no conversation in its payload', () => {
    const input = agentInput();
    const payload = buildDecisionPayload(input.goal, input.principal, [], input.allow, supportDomain);
    assert.equal('conversation' in payload, false);
    assert.deepEqual(conversationForModel(EMPTY_TRANSCRIPT).turns, []);
  });
});

describe('continue-as-new carries the transcript', () => {
  it('as kept, bounded', () => {
    const t = talk(300);
    const carried = carryState(freshRunState({ conversation: t }));
    assert.deepEqual(carried.conversation, t);
    assert.equal(carried.conversation!.turns.length, CONVERSATION_LIMITS.kept_turns);
    // Every kept turn, each with its number, speaker and step: a bound per turn, not per conversation.
    assert.ok(JSON.stringify(carried.conversation).length < CONVERSATION_LIMITS.kept_turns * 80);
  });
});

describe('the conversation block of the run input', () => {
  const check = (conversation: unknown) => checkAgentInput({ ...agentInput(), conversation }, supportDomain);
  it('is optional, with bounds on the idle timeout', () => {
    assert.deepEqual(checkAgentInput(agentInput(), supportDomain), { ok: true });
    assert.deepEqual(check({}), { ok: true });
    assert.deepEqual(check({ idle_timeout_seconds: 30 }), { ok: true });
    for (const bad of [{ idle_timeout_seconds: 0 }, { idle_timeout_seconds: 1.5 }, { idle_timeout_seconds: 1e12 }])
      assert.match((check(bad) as { error: string }).error, /conversation\.idle_timeout_seconds/);
    assert.match((check({ idle: 3 }) as { error: string }).error, /conversation/);
  });
});

describe("the model's instructions in a conversation", () => {
  it('add the message shape only when the payload has a conversation', () => {
    assert.equal(systemPromptOf({}), SYSTEM_PROMPT);
    assert.doesNotMatch(SYSTEM_PROMPT, /"kind":"message"/);
    assert.match(systemPromptOf({ conversation: conversationForModel(EMPTY_TRANSCRIPT) }), /"kind":"message"/);
    assert.ok(CONVERSATION_SYSTEM_PROMPT.startsWith(SYSTEM_PROMPT));
  });
});

describe("the model's message action", () => {
  it('must show: blank or invisible text is invalid_action:missing_text, as a customer message is refused', () => {
    for (const text of ['', '   ', '\u200b\u200b\u2060', '\ufeff\u00ad', '\u3164', '\u2800']) {
      const result = validateParsedAction({ kind: 'message', text }, { message: true });
      assert.deepEqual(result.ok ? 'accepted' : result.reason, 'missing_text', JSON.stringify(text));
    }
    const shown = validateParsedAction({ kind: 'message', text: '\u200bHello' }, { message: true });
    assert.equal(shown.ok, true);
  });
});
