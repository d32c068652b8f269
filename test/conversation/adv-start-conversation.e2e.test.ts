// Adversary: startConversation's promise (client/agent-client.ts, docs/tau2-retail.md): "Repeated
// (its answer lost), it reaches the same run and the same message (by its update id), not a second
// one." An update id is remembered by one run only; these repeats come after the run has moved on.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runResult, startConversation } from '../../client/agent-client';
import { agentFixture } from '../helpers/agent-fixture';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { final, message } from '../../offline-model/scripted-replies';
import { sayUpdate, stateQuery } from '../../common/agent-messages';

const fixture = agentFixture({ queue: 'adv-start-conv' });

const conversation = { conversation: { idle_timeout_seconds: 600 } };

describe('adversary: startConversation', () => {
  it('a repeat after the run has ended reaches that run, not a second one that acts on the message again', async () => {
    const id = uniqueId('adv-conv-ended');
    fixture.llm.script(id, [final('Your order is refunded.'), final('Your order is refunded again.')]);
    const first = { text: 'Please refund order 7.' };
    const handle = await startConversation(fixture.client, fixture.env, agentInput(conversation), id, first);
    const firstRunId = (await handle.describe()).runId;
    await runResult(handle);
    assert.equal(fixture.llm.requests(id).length, 1);

    // The sender never saw the answer above, and sends again, as the docstring invites.
    const again = await startConversation(fixture.client, fixture.env, agentInput(conversation), id, first);
    const againRunId = (await again.describe()).runId;
    // Give a second run, if one started, the time to ask the model.
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(againRunId, firstRunId, 'the repeat started a second run for the same conversation');
    assert.equal(fixture.llm.requests(id).length, 1, 'the model decided twice on the same first message');
  });

  it('a repeat after the run continued as new does not add the first message a second time', async () => {
    const id = uniqueId('adv-conv-can');
    fixture.llm.script(id, [message('How can I help?'), message('Anything else?'), final('Bye.')]);
    const first = { text: 'Hello, I need help with order 7.' };
    const input = agentInput({ ...conversation, continue_as_new_every: 1 });
    const handle = await startConversation(fixture.client, fixture.env, input, id, first);
    const firstRunId = (await handle.describe()).runId;
    await eventually('the agent to answer and wait', async () => {
      const s = await handle.query(stateQuery);
      return s.phase === 'awaiting_customer' ? s : undefined;
    });
    await handle.executeUpdate(sayUpdate, { args: [{ text: 'It arrived broken.' }] });
    // The run has continued as new (one step per run here): a new run id, waiting again.
    await eventually('the run to continue as new and wait for the customer', async () => {
      const d = await fixture.client.workflow.getHandle(id).describe();
      if (d.runId === firstRunId) return undefined;
      const s = await fixture.client.workflow.getHandle(id).query(stateQuery);
      return s.phase === 'awaiting_customer' ? s : undefined;
    });

    await startConversation(fixture.client, fixture.env, input, id, first);
    const state = await fixture.client.workflow.getHandle(id).query(stateQuery);
    assert.equal(
      state.conversation?.customer_messages,
      2,
      `the same first message joined the transcript twice: ${JSON.stringify(state.conversation?.turns.map((t) => [t.n, t.from, t.text]))}`,
    );
  });

  it('a first message the run refuses leaves no run deciding without it', async () => {
    const id = uniqueId('adv-conv-refused');
    fixture.llm.script(id, [message('Hello! How can I help you today?'), final('Bye.')]);
    // Blank text: the say validator refuses it (docs/conversations.md), so startConversation throws.
    await assert.rejects(
      startConversation(fixture.client, fixture.env, agentInput(conversation), id, { text: ' \u200b ' }),
    );
    await new Promise((r) => setTimeout(r, 3000));
    const asked = fixture.llm.requests(id).length;
    const status = await fixture.client.workflow
      .getHandle(id)
      .describe()
      .then((d) => d.status.name)
      .catch(() => 'none');
    assert.equal(
      asked,
      0,
      `startConversation failed, yet a run (${status}) made ${asked} decision(s) with no first message`,
    );
  });
});
