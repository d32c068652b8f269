// Adversary (docs/conversations.md, "A message sent as the run continues as new"): a conversation
// that continues as new after every step while two clients at once, the library (sayToRun) and
// `agent say` processes, send it many messages. Each message must be applied exactly once (one
// turn, its own turn number), none lost, none refused, whichever run of the chain takes it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { billing, final, message } from '../../offline-model/scripted-replies';
import type { RecordedRequest } from '../../offline-model/scripted-llm-server';
import { runResult } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import { uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

const fixture = agentFixture({ queue: 'adv5-flood' });

const LIBRARY_MESSAGES = 14;
const CLI_MESSAGES = 6;

describe('adv5: many messages from two clients to a chain that continues as new every step', () => {
  it('every message is one turn, with its own number; a refused one is absent, none is lost', async () => {
    const id = uniqueId('adv5-flood');
    const LAST = 'That is all, thanks.';
    // Odd steps: a read (the step ends, the run continues as new at once). Even steps: a message to
    // the customer (their unanswered turns start again from 0; the run waits for the next one).
    // The customer's last message gets the final answer.
    const script = async (req: RecordedRequest) =>
      JSON.stringify(req.body).includes(LAST)
        ? final('All noted. Bye.')
        : (req.step ?? 0) % 2 === 1
          ? billing()
          : message('Noted. Anything else?');
    const { handle } = await fixture.start(
      script,
      {
        conversation: {},
        continue_as_new_every: 1,
        budget: { max_steps: 2000, max_tool_calls: 2000, max_seconds: 300, max_repeats: 0 },
      },
      { id },
    );
    const firstRunId = handle.firstExecutionRunId;

    // Two senders of each kind at a time. The run refuses a 6th unanswered message (a documented
    // refusal, one line): such a message must then be nowhere in the transcript.
    const texts: string[] = [];
    const receipts = new Map<string, number>();
    const failures: string[] = [];
    const librarySender = async (k: number) => {
      for (let i = k; i < LIBRARY_MESSAGES; i += 2) {
        const text = `library message ${i}`;
        texts.push(text);
        try {
          receipts.set(text, (await sayToRun(fixture.client, id, { text })).n);
        } catch (err) {
          failures.push(`${text}: ${String(err)}`);
        }
      }
    };
    const cliSender = async (k: number) => {
      for (let i = k; i < CLI_MESSAGES; i += 2) {
        const text = `cli message ${i}`;
        texts.push(text);
        const out = await runCli(fixture.env, ['say', id, text, '-o', 'json']);
        if (out.code === 0) receipts.set(text, (JSON.parse(out.stdout) as { n: number }).n);
        else failures.push(`${text}: exit ${out.code}: ${out.stderr}`);
      }
    };
    await Promise.all([librarySender(0), librarySender(1), cliSender(0), cliSender(1)]);
    const BUSY = /refused the message: 5 messages are waiting for the agent's reply; wait for it\n?$/;
    assert.deepEqual(
      failures.filter((f) => !BUSY.test(f)),
      [],
      'every say returned a receipt or the one-line refusal of a 6th unanswered message',
    );
    const refused = new Set(failures.map((f) => f.slice(0, f.indexOf(':'))));
    assert.ok(receipts.size >= texts.length / 2, `most messages were taken (${receipts.size} of ${texts.length})`);
    texts.push(LAST);
    receipts.set(LAST, (await sayToRun(fixture.client, id, { text: LAST })).n);

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    const customerTurns = (result.conversation?.turns ?? []).filter((t) => t.from === 'customer');
    for (const text of texts) {
      const n = customerTurns.filter((t) => t.text === text).length;
      assert.equal(
        n,
        refused.has(text) ? 0 : 1,
        `"${text}" (${refused.has(text) ? 'refused' : 'taken'}) is in the transcript ${n} times`,
      );
    }
    assert.equal(result.conversation?.customer_messages, receipts.size);
    // The receipts' turn numbers are distinct and are the turns the transcript gives those texts.
    assert.equal(new Set(receipts.values()).size, receipts.size, 'each receipt has its own turn number');
    for (const t of customerTurns) assert.equal(t.n, receipts.get(t.text), t.text);

    // It did continue as new under the messages: many runs in the chain.
    const described = await fixture.client.workflow.getHandle(id).describe();
    assert.notEqual(described.runId, firstRunId, 'the chain continued as new');
    let runs = 0;
    for await (const _ of fixture.client.workflow.list({ query: `WorkflowId = '${id}'` })) runs++;
    assert.ok(runs >= 5, `the chain has ${runs} runs`);
    console.log(
      `adv5 flood: ${receipts.size} messages taken, ${refused.size} refused (busy), ${runs} runs in the chain`,
    );
  });
});
