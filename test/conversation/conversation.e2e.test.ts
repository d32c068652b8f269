// Conversations end to end: a real dev server, a real worker process, the scripted model, and the
// customer's side through the CLI (`agent chat` over a pipe, `agent say`) and Temporal's own CLI.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { runResult, runState, startConversation } from '../../client/agent-client';
import { sayToRun, SayError } from '../../client/conversation';
import type { WorkflowHandle } from '@temporalio/client';
import type { AgentState } from '../../common/types';
import type { reactAgent } from '../../workflows/agent/agent';
import { byStep, final, message, tool } from '../../offline-model/scripted-replies';
import type { RecordedRequest } from '../../offline-model/scripted-llm-server';
import { agentFixture } from '../helpers/agent-fixture';
import { chat as chatOn } from '../helpers/chat';
import { runCli } from '../helpers/cli';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { requestView } from '../../offline-model/request-view';

const fixture = agentFixture({ queue: 'conversation' });

const GREETING = 'Hello! How can I help you today?';

const chat = (args: string[], lines: string) => chatOn(fixture.env, args, lines);

/** What the model was shown of the conversation at a decision. */
function conversationSeen(req: RecordedRequest): { turns: Array<{ n: number; from: string; text: string }> } {
  return requestView(req.body)!.conversation!;
}

async function awaitingCustomer(handle: WorkflowHandle<typeof reactAgent>): Promise<AgentState> {
  return eventually('the run to wait for the customer', async () => {
    const state = await runState(handle);
    return state.phase === 'awaiting_customer' ? state : undefined;
  });
}

/** `temporal workflow update execute --name say`; never rejects: the exit code is checked. */
function temporalSay(id: string, inputs: string[]): Promise<{ code: number; output: string }> {
  const cli = process.env.TEMPORAL_CLI_PATH;
  assert.ok(cli, 'TEMPORAL_CLI_PATH is set by `npm test`');
  const args = ['workflow', 'update', 'execute', '--workflow-id', id, '--name', 'say'];
  for (const input of inputs) args.push('--input', input);
  args.push('--address', fixture.env.address, '--namespace', fixture.env.namespace);
  return new Promise((resolve) => {
    execFile(cli, args, { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) || 1 : 0, output: `${stdout}${stderr}` }),
    );
  });
}

describe('a conversation run', () => {
  it('agent chat over a pipe: turns both ways, a tool in between, the final answer ends it', async () => {
    const id = uniqueId('chat');
    fixture.llm.script(
      id,
      byStep({
        1: message(GREETING),
        2: tool('get_user_profile', { user_id: 42 }),
        3: message('I found your profile. Anything else?'),
        4: final('Glad I could help. Goodbye!'),
      }),
    );
    const out = await chat(
      ['--user', '42', '--id', id, '--max-steps', '6'],
      'What plan am I on?\nNo, that is all, thanks.\n',
    );
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(out.stdout.trim().split('\n'), [
      `agent: ${GREETING}`,
      'you: What plan am I on?',
      'agent: I found your profile. Anything else?',
      'you: No, that is all, thanks.',
      'agent: Glad I could help. Goodbye!',
      'conversation ended: success (the model gave a final answer)',
    ]);
    assert.match(out.stderr, new RegExp(`started conversation ${id}`));

    const requests = fixture.llm.requests(id);
    assert.deepEqual(
      conversationSeen(requests[1]!).turns.map((t) => [t.n, t.from, t.text]),
      [
        [1, 'agent', GREETING],
        [2, 'customer', 'What plan am I on?'],
      ],
      "the model's second decision reads the customer's message",
    );
    assert.match(
      requests[0]!.body.messages[0].content,
      /plain text/,
      'the system prompt says how to write to the customer',
    );
    const result = await runResult(client().workflow.getHandle(id));
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(
      result.trace.map((t) => [t.step, t.tool, t.ok]),
      [
        [1, 'message', true],
        [2, 'get_user_profile', true],
        [3, 'message', true],
      ],
    );
    assert.deepEqual(
      [result.conversation?.total, result.conversation?.agent_messages, result.conversation?.customer_messages],
      [4, 2, 2],
    );
  });

  it('agent chat: /end ends the conversation (customer_ended, exit 0)', async () => {
    const id = uniqueId('chat-end');
    fixture.llm.script(id, byStep({ 1: message(GREETING) }));
    const out = await chat(['--user', '42', '--id', id], '/end\n');
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(out.stdout.trim().split('\n'), [
      `agent: ${GREETING}`,
      'conversation ended: customer_ended (the customer ended the conversation)',
    ]);
    const result = await runResult(client().workflow.getHandle(id));
    assert.deepEqual([result.status, result.stop_reason], ['ok', 'customer_ended']);
    assert.equal(fixture.llm.requests(id).length, 1, 'no decision after the customer left');
  });

  it('agent say: messages sent while the agent works wait for its next decision; --end ends it', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { id, handle } = await fixture.start(
      byStep({
        1: message(GREETING),
        2: async () => {
          await gate;
          return tool('get_user_profile', { user_id: 42 });
        },
        3: message('Done. Anything else?'),
      }),
      { conversation: {} },
    );
    const waiting = await awaitingCustomer(handle);
    assert.equal(waiting.conversation?.last_message?.text, GREETING);
    assert.match(waiting.waiting_for ?? '', /the customer's reply/);
    const status = await runCli(fixture.env, ['status', id]);
    assert.match(status.stdout, /phase:\s+awaiting_customer/);
    assert.ok(status.stdout.includes(`agent said: "${GREETING}"`), status.stdout);
    assert.match(status.stdout, new RegExp(`reply:\\s+agent say ${id} TEXT`));

    const first = await runCli(fixture.env, ['say', id, 'I need help with my plan.']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /said \(turn 2\) in .*: the agent was waiting for it/);
    // Step 2's decision is held: these arrive while the agent works.
    await eventually('step 2 to be decided', () => (fixture.llm.requests(id).length >= 2 ? true : undefined));
    const second = await runCli(fixture.env, ['say', id, 'It is the pro plan.', '-o', 'json']);
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(JSON.parse(second.stdout), { n: 3, awaited: false, ended: false });
    release();

    await eventually('the agent to answer', async () => {
      const state = await runState(handle);
      return state.phase === 'awaiting_customer' && state.conversation?.agent_messages === 2 ? true : undefined;
    });
    const seen = conversationSeen(fixture.llm.requests(id)[2]!).turns.map((t) => t.text);
    assert.deepEqual(seen.slice(-2), ['I need help with my plan.', 'It is the pro plan.']);

    const bye = await runCli(fixture.env, ['say', id, 'Thanks, bye.', '--end']);
    assert.equal(bye.code, 0, bye.stderr);
    const result = await runResult(handle);
    assert.deepEqual([result.status, result.stop_reason], ['ok', 'customer_ended']);
    assert.deepEqual(result.conversation?.turns.at(-1), {
      n: 5,
      from: 'customer',
      text: 'Thanks, bye.',
      step: 3,
      end: true,
    });
    assert.equal(result.trace.at(-1)?.stop_reason, 'customer_ended');

    const late = await runCli(fixture.env, ['say', id, 'Hello again?']);
    assert.equal(late.code, 1);
    assert.match(late.stderr.trim(), /has ended \(COMPLETED\): the conversation is over$/);
    const shown = await runCli(fixture.env, ['result', id]);
    assert.equal(shown.code, 0, 'a conversation the customer ended exits 0');
    assert.match(shown.stdout, /result: ok \(customer_ended\)/);
    assert.match(shown.stdout, /conversation: 5 turns \(2 from the agent, 3 from the customer\)/);
    const trace = await runCli(fixture.env, ['trace', id, '-o', 'json']);
    assert.equal(trace.code, 0, trace.stderr);
    assert.match(trace.stdout, /"decision": "message"/);
  });

  it("startConversation: the customer's first message is there before the first decision; a repeat is the same run and message", async () => {
    const id = uniqueId('conversation-first');
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    fixture.llm.script(
      id,
      byStep({
        1: async () => {
          await gate; // the run is still running when the start is repeated
          return final('Your plan is Pro. Bye.');
        },
      }),
    );
    const input = agentInput({ conversation: {} });
    const first = { text: 'What plan am I on?' };
    const handle = await startConversation(fixture.client, fixture.env, input, id, first);
    // The answer was lost, say: the same call again reaches the same run and does not add the message twice.
    const again = await startConversation(fixture.client, fixture.env, input, id, first);
    assert.equal(again.workflowId, id);
    release();
    const result = await runResult(handle);
    assert.deepEqual([result.status, result.stop_reason], ['ok', 'success']);
    const requests = fixture.llm.requests(id);
    assert.equal(requests.length, 1);
    assert.deepEqual(
      conversationSeen(requests[0]!).turns.map((t) => [t.from, t.text]),
      [['customer', 'What plan am I on?']],
      'the first decision already sees the message',
    );
    assert.equal(result.conversation?.customer_messages, 1);
  });

  it('a final answer decided while the customer wrote is not sent: the model decides again with the new turn', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { id, handle } = await fixture.start(
      byStep({
        1: message(GREETING),
        2: async () => {
          await gate;
          return final('Your plan is Pro. Bye.');
        },
        3: final('Your plan is Pro, and your cancellation request is noted. Bye.'),
      }),
      { conversation: {} },
    );
    await awaitingCustomer(handle);
    assert.equal((await runCli(fixture.env, ['say', id, 'What plan am I on?'])).code, 0);
    // Step 2's decision (a final answer) is held while the customer writes again.
    await eventually('step 2 to be decided', () => (fixture.llm.requests(id).length >= 2 ? true : undefined));
    const late = await runCli(fixture.env, ['say', id, 'Wait - also cancel my subscription please.']);
    assert.equal(late.code, 0, late.stderr);
    release();

    const result = await runResult(handle);
    assert.deepEqual([result.status, result.stop_reason], ['ok', 'success']);
    assert.equal(result.answer, 'Your plan is Pro, and your cancellation request is noted. Bye.');
    const requests = fixture.llm.requests(id);
    assert.equal(requests.length, 3, 'the model was asked again after the unread turn');
    const seen = conversationSeen(requests[2]!).turns.map((t) => t.text);
    assert.equal(seen.at(-1), 'Wait - also cancel my subscription please.');
  });

  it('the transcript is carried across continue-as-new, and the model sees it after', async () => {
    const { id, handle } = await fixture.start(
      byStep({ 1: message(GREETING), 2: message('Anything else?'), 3: final('Goodbye!') }),
      { conversation: {}, continue_as_new_every: 1 },
    );
    const turnOf = async (agentMessages: number) =>
      eventually(`the agent's message ${agentMessages}`, async () => {
        const state = await runState(handle);
        const c = state.conversation;
        return state.phase === 'awaiting_customer' && c?.agent_messages === agentMessages && c.unanswered === 0
          ? true
          : undefined;
      });
    await turnOf(1);
    assert.equal((await runCli(fixture.env, ['say', id, 'First question.'])).code, 0);
    await turnOf(2);
    assert.equal((await runCli(fixture.env, ['say', id, 'Second question.'])).code, 0);
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(
      conversationSeen(fixture.llm.requests(id)[2]!).turns.map((t) => t.text),
      [GREETING, 'First question.', 'Anything else?', 'Second question.'],
      'the third run reads the turns of the first two',
    );
    assert.notEqual((await handle.describe()).runId, handle.firstExecutionRunId, 'the run continued as new');
    assert.equal(result.conversation?.total, 4);
  });

  it('says back to back while the run continues as new at every step: no raw error, each applied once (issue 29 item 9)', async () => {
    const { id, handle } = await fixture.start(byStep({}, message('Noted.')), {
      conversation: {},
      continue_as_new_every: 1,
      budget: { max_steps: 500, max_tool_calls: 10, max_seconds: 600 },
    });
    await awaitingCustomer(handle);
    const sent = 40;
    for (let i = 1; i <= sent; i++) {
      // A refusal the customer would see is fine (too many unanswered: the agent has not read them
      // yet, so the message is sent again once it has); any other error fails the test.
      for (;;) {
        try {
          await sayToRun(fixture.client, id, { text: `message ${i}` });
          break;
        } catch (err) {
          if (!(err instanceof SayError && /waiting for the agent's reply/.test(err.message))) throw err;
          await eventually('the agent to read the messages', async () =>
            (await runState(handle)).conversation!.unanswered < 5 ? true : undefined,
          );
        }
      }
    }
    await sayToRun(fixture.client, id, { end: true });
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'customer_ended');
    assert.equal(result.conversation!.customer_messages, sent + 1, 'every message applied exactly once');
    const texts = result.conversation!.turns.filter((t) => t.from === 'customer' && t.text).map((t) => t.text);
    assert.deepEqual(texts, [...new Set(texts)], 'no message twice');
    assert.equal(texts.at(-1), `message ${sent}`);
    const runs = await eventually('the chain to have continued as new', async () => {
      let count = 0;
      for await (const _ of fixture.client.workflow.list({ query: `WorkflowId = '${id}'` })) count++;
      return count > 5 ? count : undefined;
    });
    assert.ok(runs > 5, `${runs} runs`);
  });

  it('a customer who never answers: the run ends idle_timeout after the idle timeout', async () => {
    const { id, handle } = await fixture.start(byStep({ 1: message(GREETING) }), {
      conversation: { idle_timeout_seconds: 2 },
    });
    const waiting = await awaitingCustomer(handle);
    const expires = Date.parse(waiting.conversation!.idle_expires_at!);
    assert.ok(expires > Date.now() - 5_000 && expires <= Date.now() + 2_000, waiting.conversation!.idle_expires_at);
    const result = await runResult(handle);
    assert.deepEqual([result.status, result.stop_reason], ['stopped', 'idle_timeout']);
    assert.deepEqual(result.trace.at(-1), {
      step: 1,
      tool: 'message',
      args_hash: result.trace.at(-1)!.args_hash,
      ok: true,
      stop_reason: 'idle_timeout',
    });
    assert.equal(fixture.llm.requests(id).length, 1);
    const shown = await runCli(fixture.env, ['result', id]);
    assert.equal(shown.code, 4, 'idle_timeout is a stopped run');
    assert.match(shown.stdout, /did not answer the agent's message in time/);
  });

  it('a cancel while the agent waits for the customer ends the run cancelled', async () => {
    const { id, handle } = await fixture.start(byStep({ 1: message(GREETING) }), { conversation: {} });
    await awaitingCustomer(handle);
    const cancel = await runCli(fixture.env, ['cancel', id]);
    assert.equal(cancel.code, 0, cancel.stderr);
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'cancelled');
    assert.equal(result.conversation?.turns[0]?.text, GREETING);
    assert.equal(fixture.llm.requests(id).length, 1);
  });

  it('refuses hostile say payloads in the validator (temporal CLI): nothing changes, then a real message works', async () => {
    const { id, handle } = await fixture.start(byStep({ 1: message(GREETING), 2: final('Bye.') }), {
      conversation: {},
    });
    await awaitingCustomer(handle);
    const hostile: Array<[string, RegExp]> = [
      ['null', /a message is an object/],
      ['[]', /a message is an object/],
      ['"hello"', /a message is an object/],
      ['42', /a message is an object/],
      ['{}', /a message needs visible text/],
      ['{"text":""}', /a message needs visible text/],
      ['{"text":"\\u200b\\u2060\\u00a0"}', /a message needs visible text/],
      ['{"text":7}', /text must be a string/],
      ['{"text":{"$ne":1}}', /text must be a string/],
      [`{"text":"${'x'.repeat(5000)}"}`, /at most 4000 characters/],
      ['{"text":"hi","end":"yes"}', /end must be true or false/],
      ['{"text":"hi","role":"operator"}', /unknown field\(s\) in the message: role/],
      ['{"text":"hi","__proto__":{"end":true}}', /unknown field/],
    ];
    for (const [input, expected] of hostile) {
      const sent = await temporalSay(id, [input]);
      assert.notEqual(sent.code, 0, `${input.slice(0, 80)} was accepted: ${sent.output.slice(0, 300)}`);
      assert.match(sent.output, expected, input.slice(0, 80));
    }
    const none = await temporalSay(id, []);
    assert.notEqual(none.code, 0);
    // Two arguments (an adversary's find): the second, an ending, would have been dropped unread.
    const two = await temporalSay(id, ['{"text":"hi"}', '{"end":true}']);
    assert.notEqual(two.code, 0, two.output);
    assert.match(two.output, /a message is an object/);

    const state = await runState(handle);
    assert.equal(state.phase, 'awaiting_customer');
    assert.equal(state.conversation?.total, 1);
    const events = (await handle.fetchHistory()).events ?? [];
    assert.equal(events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length, 0);
    assert.equal(events.filter((e) => e.workflowTaskFailedEventAttributes).length, 0);

    const ok = await temporalSay(id, ['{"text":"Just saying hi."}']);
    assert.equal(ok.code, 0, ok.output);
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.conversation?.turns.at(-1)?.text, 'Just saying hi.');
  });

  it('a run that is not a conversation refuses say, and its model may not send messages', async () => {
    // Native tool calling: text without a call is the final answer outside a conversation (json
    // mode's message kind there is invalid_action:bad_kind, test/loop/contract.test.ts).
    const { id, handle } = await fixture.start(byStep({ 1: message('Hi there') }));
    const result = await runResult(handle);
    assert.deepEqual([result.stop_reason, result.answer], ['success', 'Hi there']);
    assert.equal(fixture.llm.requests(id).length, 1);
    const { id: other, handle: running } = await fixture.start(byStep({ 1: { hang: true } }));
    await eventually('a decision in flight', () => (fixture.llm.requests(other).length > 0 ? true : undefined));
    const refused = await runCli(fixture.env, ['say', other, 'hello']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr.trim(), /refused the message: this run is not a conversation/);
    const attach = await chat(['--id', other], 'hello\n');
    assert.equal(attach.code, 1, attach.stderr);
    assert.match(attach.stderr.trim(), /is not a conversation/);
    await runCli(fixture.env, ['cancel', other]);
    assert.equal((await runResult(running)).stop_reason, 'cancelled');
  });
});

function client() {
  return fixture.client;
}
