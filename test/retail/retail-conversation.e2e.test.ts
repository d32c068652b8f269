// The retail domain end to end: a conversation with a real dev server, real worker processes, the
// scripted model and τ²-bench's shop database in a real SQLite file. Whom the run acts for comes
// from an authentication tool's result; every write waits for the customer's explicit yes; writes
// before authentication and on another user's order are denied; a refusal of a tool is an
// observation; a worker killed between the customer's yes and the write still writes exactly once.
import { requestView } from '../../offline-model/request-view';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { runResult, runState } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import type { AgentInput, AgentResult, AgentState } from '../../common/types';
import type { reactAgent } from '../../workflows/agent/agent';
import { countAppliedWrites, readRetailDb } from '../../domains/retail/backend/open';
import { retailTools } from '../../domains/retail/tools/index';
import { byStep, final, message, tool } from '../../offline-model/scripted-replies';
import type { RecordedRequest } from '../../offline-model/scripted-llm-server';
import type { WorkerProcess } from '../../local-servers/worker-process';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { agentFixture } from '../helpers/agent-fixture';
import { chat as chatOn, chatSession } from '../helpers/chat';
import { SayError } from '../../client/conversation';
import { eventually, uniqueId } from '../helpers/harness';

const RETAIL_DB = path.join(mkdtempSync(path.join(os.tmpdir(), 'retail-e2e-')), 'retail.sqlite');
const STALL_MS = '60000'; // far beyond the write's heartbeat timeout: the attempt never reports in time

const fixture = agentFixture({
  queue: 'retail',
  workerEnv: { AGENT_RETAIL_DB: RETAIL_DB },
  setup: async () => {
    killEnv = fixture.queue('retail-kill');
    killWorker = fixture.startWorker(
      { AGENT_RETAIL_DB: RETAIL_DB, AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS: STALL_MS },
      killEnv,
    );
    await killWorker.ready;
  },
});
let killEnv: TemporalEnv; // its worker hangs before the write commits; killed with SIGKILL
let killWorker: WorkerProcess;

// From τ²-bench's retail database: two customers, each with a pending order.
const IVAN = { user_id: 'ivan_santos_6635', email: 'ivan.santos3158@example.com', order: '#W8770097' };
const ANYA_ORDER = '#W6436609';
const CANCEL = { order_id: IVAN.order, reason: 'no longer needed' };

function retailInput(overrides: Partial<AgentInput> = {}): Partial<AgentInput> {
  return {
    goal: 'Serve the retail customer.',
    domain: 'retail',
    principal: undefined,
    allow: retailTools.map((t) => t.name),
    conversation: {},
    budget: { max_steps: 12, max_tool_calls: 10, max_seconds: 120 },
    ...overrides,
  };
}

const statusOf = async (id: string, order: string) => (await readRetailDb(RETAIL_DB, id)).orders[order]!.status;
/** The decision payload the model received. */
const payloadOf = (req: RecordedRequest) => requestView(req.body)!;

async function awaitingConsent(handle: WorkflowHandle<typeof reactAgent>): Promise<AgentState> {
  return eventually('the run to ask for consent', async () => {
    const state = await runState(handle);
    return state.phase === 'awaiting_customer' && state.conversation?.last_message?.consent ? state : undefined;
  });
}

const chat = (args: string[], lines: string) => chatOn(fixture.env, args, lines);

function consentTurns(result: AgentResult) {
  return (result.conversation?.turns ?? []).filter((t) => t.consent !== undefined);
}

describe('retail conversations', () => {
  it('agent chat --domain retail: authentication, a look-up, a cancel the customer confirms, written once', async () => {
    const id = uniqueId('retail-chat');
    fixture.llm.script(
      id,
      byStep({
        1: message('Hello! How can I help?'),
        2: tool('find_user_id_by_email', { email: IVAN.email }),
        3: tool('get_order_details', { order_id: IVAN.order }),
        4: tool('cancel_pending_order', CANCEL),
        5: final(`Order ${IVAN.order} is cancelled.`),
      }),
    );
    // The yes is written once the question is shown: a line typed before it would not answer it.
    const session = chatSession(fixture.env, ['--id', id, '--domain', 'retail', '--allow', 'all', '--max-steps', '10']);
    session.type(`Please cancel ${IVAN.order}; my email is ${IVAN.email}`);
    await session.shows(/exact action/);
    session.type('yes');
    session.end();
    const out = await session.done;
    assert.equal(out.code, 0, out.output);
    const shown = out.stdout.trim().split('\n');
    assert.deepEqual(shown.slice(0, 2), [
      'agent: Hello! How can I help?',
      `you: Please cancel ${IVAN.order}; my email is ${IVAN.email}`,
    ]);
    assert.match(
      shown[2]!,
      /^agent: To go ahead I need your confirmation of this exact action: cancel pending order \{"order_id":"#W8770097","reason":"no longer needed"\}\. /,
    );
    assert.deepEqual(shown.slice(3), [
      'you: yes',
      `agent: Order ${IVAN.order} is cancelled.`,
      'conversation ended: success (the model gave a final answer)',
    ]);

    assert.equal(await statusOf(id, IVAN.order), 'cancelled');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 1);
    const result = await runResult(fixture.client.workflow.getHandle(id));
    assert.deepEqual(
      result.effects?.map((e) => [e.tool, e.state]),
      [['cancel_pending_order', 'confirmed']],
    );
    const requests = fixture.llm.requests(id);
    assert.equal(payloadOf(requests[1]!).principal, null, 'nobody is authenticated before the look-up');
    assert.deepEqual(
      payloadOf(requests[2]!).principal,
      { user_id: IVAN.user_id },
      'the tool result names the customer',
    );
    assert.equal(payloadOf(requests[0]!).domain, 'retail');
    assert.match(
      requests[0]!.body.messages[0].content,
      /# Retail agent policy/,
      "the domain's policy is the system prompt's",
    );
  });

  it('a declined confirmation: nothing is written, the model reads the refusal and goes on', async () => {
    const { id, handle } = await fixture.start(
      byStep({
        1: tool('find_user_id_by_email', { email: IVAN.email }),
        2: tool('cancel_pending_order', CANCEL),
        3: final('All right, I left the order as it is.'),
      }),
      retailInput(),
    );
    const asking = await awaitingConsent(handle);
    assert.deepEqual(asking.conversation?.last_message?.consent, { tool: 'cancel_pending_order', args: CANCEL });
    await sayToRun(fixture.client, id, { text: 'Yes, but wait, change the reason first' });
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.equal(await statusOf(id, IVAN.order), 'pending');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 0);
    assert.deepEqual(result.effects ?? [], []);
    const declined = result.history.find((h) => h.step === 2)!;
    assert.equal(declined.observation.ok, false);
    assert.deepEqual(declined.observation.data, {
      declined: true,
      detail: 'the customer did not confirm this action; it was not made',
      customer_reply: 'Yes, but wait, change the reason first',
    });
    assert.equal(result.trace.find((t) => t.step === 2)?.consent, 'declined');
    const seen = payloadOf(fixture.llm.requests(id)[2]!).untrusted_observations.steps.at(-1);
    assert.equal((seen?.observation.data as { declined?: unknown }).declined, true, 'the model reads the refusal');
  });

  it('a "yes" sent before the question is no consent: only the next message answers it', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { id, handle } = await fixture.start(
      byStep({
        1: tool('find_user_id_by_email', { email: IVAN.email }),
        2: async () => {
          await gate;
          return tool('cancel_pending_order', CANCEL);
        },
        3: final('Understood, nothing changed.'),
      }),
      retailInput(),
    );
    await eventually('step 2 to be decided', () => (fixture.llm.requests(id).length >= 2 ? true : undefined));
    await sayToRun(fixture.client, id, { text: 'yes' });
    release();
    await awaitingConsent(handle);
    await sayToRun(fixture.client, id, { text: 'no' });
    const result = await runResult(handle);
    assert.equal(await statusOf(id, IVAN.order), 'pending');
    assert.equal(result.trace.find((t) => t.step === 2)?.consent, 'declined');
  });

  it('agent chat, piped: a "yes" typed ahead of the question is not sent as its answer, nor taken by the run (issue 29 item 3)', async () => {
    const id = uniqueId('retail-typed-ahead');
    fixture.llm.script(
      id,
      byStep({
        1: message('Hello! How can I help?'),
        2: tool('find_user_id_by_email', { email: IVAN.email }),
        3: tool('cancel_pending_order', CANCEL),
        4: final('Nothing changed.'),
      }),
    );
    const lines = `Hi, my email is ${IVAN.email}. What is the status of my orders?\nyes\n`;
    const out = await chat(['--id', id, '--domain', 'retail', '--allow', 'all', '--max-steps', '10'], lines);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /exact action: cancel pending order/);
    assert.doesNotMatch(out.stdout, /^you: yes$/m);
    assert.match(
      out.stderr,
      /^agent: not sent: "yes" was typed before the question above; type your answer to it now$/m,
    );
    assert.match(out.stdout, /stdin closed: the conversation goes on/);
    const handle = fixture.client.workflow.getHandle<typeof reactAgent>(id);
    const asking = await awaitingConsent(handle);
    assert.equal(await statusOf(id, IVAN.order), 'pending');
    // Any client that says what it had shown: a yes written before the question is refused by the run.
    const question = asking.conversation!.last_message!.n;
    await assert.rejects(
      sayToRun(fixture.client, id, { text: 'yes', seen: question - 1 }),
      (err: Error) => err instanceof SayError && /written before the run asked for consent/.test(err.message),
    );
    assert.equal((await runState(handle)).phase, 'awaiting_customer', 'the refusal changed nothing');
    await sayToRun(fixture.client, id, { text: 'no', seen: question });
    const result = await runResult(handle);
    assert.equal(result.trace.find((t) => t.tool === 'cancel_pending_order')?.consent, 'declined');
    assert.equal(await statusOf(id, IVAN.order), 'pending');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 0);
  });

  it('agent chat in a terminal: a "yes" typed before the question is dropped; the one typed after it consents', async () => {
    const id = uniqueId('retail-tty');
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    fixture.llm.script(
      id,
      byStep({
        1: message('Hello! How can I help?'),
        2: tool('find_user_id_by_email', { email: IVAN.email }),
        3: async () => {
          await gate;
          return tool('cancel_pending_order', CANCEL);
        },
        4: final(`Order ${IVAN.order} is cancelled.`),
      }),
    );
    const session = chatSession(
      fixture.env,
      ['--id', id, '--domain', 'retail', '--allow', 'all', '--max-steps', '10'],
      {
        terminal: true,
      },
    );
    await session.shows(/agent: Hello! How can I help\?/);
    session.type(`Please cancel ${IVAN.order}; my email is ${IVAN.email}`);
    await eventually('step 3 to be decided', () => (fixture.llm.requests(id).length >= 3 ? true : undefined));
    session.type('yes'); // before the question exists
    release();
    await session.shows(/not sent: "yes" was typed before the question above/);
    assert.equal(await statusOf(id, IVAN.order), 'pending');
    session.type('yes');
    await session.shows(/conversation ended: success/);
    const out = await session.done;
    assert.equal(out.code, 0, out.output);
    assert.equal(await statusOf(id, IVAN.order), 'cancelled');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 1);
  });

  it('a write before authentication is denied, and nobody is asked', async () => {
    const { result, id } = await fixture.run(byStep({ 1: tool('cancel_pending_order', CANCEL) }), retailInput());
    assert.deepEqual([result.status, result.stop_reason], ['stopped', 'policy_denied:not_authenticated']);
    assert.deepEqual(consentTurns(result), []);
    assert.equal(await statusOf(id, IVAN.order), 'pending');
  });

  it("a write on another user's order is denied before the customer is asked", async () => {
    const { result, id } = await fixture.run(
      byStep({
        1: tool('find_user_id_by_email', { email: IVAN.email }),
        2: tool('cancel_pending_order', { order_id: ANYA_ORDER, reason: 'no longer needed' }),
      }),
      retailInput(),
    );
    assert.deepEqual([result.status, result.stop_reason], ['stopped', 'policy_denied:other_user']);
    assert.deepEqual(consentTurns(result), []);
    assert.equal(await statusOf(id, ANYA_ORDER), 'pending');
  });

  it('a refusal of a tool is an observation (ok false) and the run goes on; a transfer ends it', async () => {
    const { result } = await fixture.run(
      byStep({
        1: tool('find_user_id_by_email', { email: 'nobody@example.com' }),
        2: tool('get_product_details', { product_id: '0000000000' }),
        3: tool('transfer_to_human_agents', { summary: 'The customer cannot be found.' }),
      }),
      retailInput(),
    );
    assert.deepEqual([result.status, result.stop_reason], ['ok', 'transferred']);
    assert.deepEqual(
      result.history.map((h) => [
        h.step,
        h.observation.ok,
        (h.observation.data as { error?: string }).error ?? h.observation.data,
      ]),
      [
        [1, false, 'User not found'],
        [2, false, 'Product not found'],
        [3, true, 'Transfer successful'],
      ],
    );
  });

  it("an order id is not an identity: no order is read before authentication, and another customer's reads as not found", async () => {
    // The attack (issue 29, item 6): the order's owner id and zip, then find_user_id_by_name_zip with them.
    const early = await fixture.run(
      byStep({
        1: tool('get_order_details', { order_id: ANYA_ORDER }),
        2: tool('find_user_id_by_name_zip', { first_name: 'Anya', last_name: 'Garcia', zip: '19036' }),
        3: final('Done.'),
      }),
      retailInput(),
    );
    assert.deepEqual([early.result.status, early.result.stop_reason], ['stopped', 'policy_denied:not_authenticated']);
    assert.deepEqual(early.result.history, []);
    // Authenticated as Ivan: his order reads; Anya's answers as an order that does not exist.
    const { result } = await fixture.run(
      byStep({
        1: tool('find_user_id_by_email', { email: IVAN.email }),
        2: tool('get_order_details', { order_id: ANYA_ORDER }),
        3: tool('get_order_details', { order_id: '#W0000000' }),
        4: tool('get_order_details', { order_id: IVAN.order }),
        5: final('Done.'),
      }),
      retailInput(),
    );
    assert.equal(result.stop_reason, 'success');
    const [, theirs, none, mine] = result.history.map((h) => h.observation);
    assert.deepEqual([theirs!.ok, theirs!.data], [false, none!.data]);
    assert.match(JSON.stringify(theirs!.data), /Order not found/);
    assert.doesNotMatch(JSON.stringify(result), /anya_garcia|19036/);
    assert.equal((mine!.data as { user_id: string }).user_id, IVAN.user_id);
  });

  it('a workflow id reused for later conversations: each starts from the initial database and its yes is applied (A, B, A)', async () => {
    const id = uniqueId('retail-reuse');
    const address = (address1: string) => ({
      user_id: IVAN.user_id,
      address1,
      address2: '',
      city: 'Austin',
      state: 'TX',
      country: 'USA',
      zip: '78701',
    });
    const conversation = async (line: string) => {
      const { handle } = await fixture.start(
        byStep({
          1: tool('find_user_id_by_email', { email: IVAN.email }),
          2: tool('modify_user_address', address(line)),
          3: final('Your address is updated.'),
        }),
        retailInput(),
        { id },
      );
      await awaitingConsent(handle);
      await sayToRun(fixture.client, id, { text: 'yes' });
      const result = await runResult(handle);
      assert.equal(result.stop_reason, 'success');
      assert.equal(await countAppliedWrites(RETAIL_DB, id), 1, 'this conversation wrote once');
      return (await readRetailDb(RETAIL_DB, id)).users[IVAN.user_id]!.address.address1;
    };
    assert.equal(await conversation('1 First St'), '1 First St');
    assert.equal(await conversation('2 Second St'), '2 Second St');
    // The same call as the first conversation's: under keys of its own, it is applied, not found done.
    assert.equal(await conversation('1 First St'), '1 First St');
  });

  it('a cancel while the run waits for consent: the write is not made', async () => {
    const { id, handle } = await fixture.start(
      byStep({
        1: tool('find_user_id_by_email', { email: IVAN.email }),
        2: tool('cancel_pending_order', CANCEL),
      }),
      retailInput(),
    );
    await awaitingConsent(handle);
    await handle.cancel();
    await assert.rejects(handle.result());
    assert.equal(await statusOf(id, IVAN.order), 'pending');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 0);
  });

  it('across continue-as-new: the principal, the consent rule and the database stay those of the conversation', async () => {
    const { id, handle } = await fixture.start(
      byStep({
        1: tool('find_user_id_by_email', { email: IVAN.email }),
        2: tool('get_order_details', { order_id: IVAN.order }),
        3: tool('cancel_pending_order', CANCEL), // the second run: asked, confirmed, written
        4: tool('get_order_details', { order_id: IVAN.order }), // reads its own write
        5: tool('cancel_pending_order', { order_id: ANYA_ORDER, reason: 'no longer needed' }), // the third run
      }),
      retailInput({ continue_as_new_every: 2 }),
    );
    await awaitingConsent(handle);
    await sayToRun(fixture.client, id, { text: 'Yes, please.' });
    const result = await runResult(handle);

    assert.notEqual((await handle.describe()).runId, handle.firstExecutionRunId, 'the run continued as new');
    const requests = fixture.llm.requests(id);
    assert.deepEqual(payloadOf(requests[2]!).principal, { user_id: IVAN.user_id }, 'authentication carried');
    assert.equal(await statusOf(id, IVAN.order), 'cancelled');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 1, 'one write in the conversation');
    const reread = result.history.find((h) => h.step === 4)!;
    assert.equal(
      (reread.observation.data as { status?: string }).status,
      'cancelled',
      "the third run's look-up reads the conversation's database, not a fresh one",
    );
    assert.deepEqual(
      [result.status, result.stop_reason],
      ['stopped', 'policy_denied:other_user'],
      "the carried principal still guards another user's order",
    );
    assert.equal(consentTurns(result).length, 1, 'only the own order was asked about');
    assert.equal(await statusOf(id, ANYA_ORDER), 'pending');
  });

  it("SIGKILL between the customer's yes and the write: the next worker writes it, exactly once", async () => {
    const { id, handle } = await fixture.start(
      byStep({
        1: tool('find_user_id_by_email', { email: IVAN.email }),
        2: tool('cancel_pending_order', CANCEL),
        3: final('Cancelled.'),
      }),
      retailInput(),
      { on: killEnv },
    );
    await awaitingConsent(handle);
    await sayToRun(fixture.client, id, { text: 'Yes, please.' });
    // The write's first attempt runs on the hanging worker: the customer has said yes, nothing is written.
    await eventually('the write in flight', async () => {
      const pending = (await handle.describe()).raw.pendingActivities ?? [];
      return pending.some((a) => a.activityType?.name === 'cancel_pending_order' && a.attempt === 1) ? true : undefined;
    });
    await killWorker.kill();
    const rescue = fixture.startWorker({ AGENT_RETAIL_DB: RETAIL_DB }, killEnv);
    await rescue.ready;

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.equal(await statusOf(id, IVAN.order), 'cancelled');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 1, 'one write under its key');
    assert.deepEqual(
      result.effects?.map((e) => [e.tool, e.state]),
      [['cancel_pending_order', 'confirmed']],
    );
  });
});
