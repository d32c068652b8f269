// Broke 2026-12-07 (adversary round), fixed the same day: the first message is two turns (1 and 47): the chain remembers only the
// last 20 say Update ids, and `<workflow id>:first-message` has slid out.
// Adversary (docs/conversations.md, "Starting with the customer's first message": startConversation
// repeated (its answer lost) reaches the same run and the same message once, also after the run
// has continued as new; and "A message sent as the run continues as new": applied exactly once).
// The repeat comes after the chain has continued as new many times and more than 20 other
// messages went through: the first message must still be one turn.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { final, message } from '../../offline-model/scripted-replies';
import type { RecordedRequest } from '../../offline-model/scripted-llm-server';
import { runResult, startConversation } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';

const fixture = agentFixture({ queue: 'adv5-start-again' });
const OTHERS = 22;

describe('adv5: startConversation repeated after more than 20 messages and many continue-as-new', () => {
  it('the first message is one turn', async () => {
    const id = uniqueId('adv5-start-again');
    const FIRST = 'Hi, what plan am I on?';
    const LAST = 'That is all.';
    fixture.llm.script(id, (req: RecordedRequest) =>
      JSON.stringify(req.body).includes(LAST) ? final('Bye.') : message('Noted. Anything else?'),
    );
    const input = agentInput({
      conversation: {},
      continue_as_new_every: 1,
      budget: { max_steps: 200, max_tool_calls: 10, max_seconds: 240, max_repeats: 0 },
    });
    const handle = await startConversation(fixture.client, fixture.env, input, id, { text: FIRST });
    await eventually('the first answer', () => (fixture.llm.requests(id).length >= 1 ? true : undefined));
    for (let i = 0; i < OTHERS; i++) {
      const decided = fixture.llm.requests(id).length;
      await sayToRun(fixture.client, id, { text: `other message ${i}` });
      await eventually(`the answer to other message ${i}`, () =>
        fixture.llm.requests(id).length > decided ? true : undefined,
      );
    }
    // The start's answer was lost: the customer's app repeats it.
    const again = await startConversation(fixture.client, fixture.env, input, id, { text: FIRST });
    assert.equal(again.workflowId, id);
    await sayToRun(fixture.client, id, { text: LAST });
    const result = await runResult(handle);
    const turns = (result.conversation?.turns ?? []).filter((t) => t.from === 'customer' && t.text === FIRST);
    console.log(
      `adv5 start-again: ${result.stop_reason}; the first message is ${turns.length} turn(s) (${turns.map((t) => t.n).join(', ')})`,
    );
    assert.equal(turns.length, 1, 'the first message is one turn');
    assert.equal(result.conversation?.customer_messages, OTHERS + 2);
  });
});
