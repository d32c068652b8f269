// The operator's inbox on a real server with a real worker: a run in each wait (an approval, an
// escalation, a top-up, the customer's message, the customer's consent) is listed by `agent list
// --waiting` with its kind and the command that answers it; once answered, cancelled or ended it
// waits for `none`. Exact across a worker restart (the new worker replays the run), a reset and
// continue-as-new (the next run says what it waits for). The worker's agent_runs_waiting gauge counts
// them. A hostile --waiting value is one line.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runResult } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import { AGENT_STATUS, AGENT_WAITING } from '../../common/temporal/search-attributes';
import { nextCommand } from '../../common/temporal/waiting';
import type { WaitKind } from '../../common/temporal/waiting';
import { retailTools } from '../../domains/retail/tools/index';
import { byStep, escalate, final, message, tool } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { resetToFirstWorkflowTask, temporalCli } from '../helpers/temporal-cli-run';
import { eventually, uniqueId } from '../helpers/harness';
import { billingOf, refundInput, refundOf } from '../helpers/refund-fixtures';

const RETAIL_DB = path.join(mkdtempSync(path.join(os.tmpdir(), 'inbox-e2e-')), 'retail.sqlite');
const fixture = agentFixture({
  queue: 'inbox',
  refunds: true,
  workerEnv: { AGENT_RETAIL_DB: RETAIL_DB, OPENAI_TIMEOUT_SECONDS: '120' },
});

// From τ²-bench's retail database: a customer with a pending order.
const IVAN = { email: 'ivan.santos3158@example.com', order: '#W8770097' };

/** The current run's AgentWaiting and AgentStatus, as the server has them. */
async function attributes(id: string): Promise<{ waiting?: string; status?: string; runId: string }> {
  const d = await fixture.client.workflow.getHandle(id).describe();
  return {
    waiting: d.typedSearchAttributes.get(AGENT_WAITING),
    status: d.typedSearchAttributes.get(AGENT_STATUS),
    runId: d.runId,
  };
}

async function waitsFor(id: string, kind: WaitKind): Promise<void> {
  await eventually(`${id} AgentWaiting=${kind}`, async () =>
    (await attributes(id)).waiting === kind ? true : undefined,
  );
}

interface InboxRow {
  workflow_id: string;
  waiting: string | null;
  next: string;
}

/** `agent list --waiting ARGS -o json`, until `ok` holds of its rows (visibility lags the upsert). */
async function inboxUntil(args: string[], ok: (rows: InboxRow[]) => boolean): Promise<InboxRow[]> {
  return eventually(`agent list --waiting ${args.join(' ')}`, async () => {
    const r = await runCli(fixture.env, ['list', '--waiting', ...args, '-o', 'json', '--limit', '1000']);
    assert.equal(r.code, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as InboxRow[];
    return ok(rows) ? rows : undefined;
  });
}

async function cli(args: string[]): Promise<string> {
  const r = await runCli(fixture.env, args, { AGENT_OPERATOR: 'inbox-test' });
  assert.equal(r.code, 0, `agent ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

function retailConversation() {
  return {
    goal: 'Serve the retail customer.',
    domain: 'retail',
    principal: undefined,
    allow: retailTools.map((t) => t.name),
    conversation: {},
    budget: { max_steps: 20, max_tool_calls: 15, max_seconds: 300 },
  };
}

describe('agent list --waiting: the runs waiting for a person', () => {
  it('each wait is listed with its kind and next command, and waits for none once answered, cancelled or ended', async () => {
    const user = fixture.refunds.nextUser();
    const approval = await fixture.start([billingOf(user), refundOf(user, 49), final('Not refunded.')], {
      ...refundInput(user),
      budget: { max_seconds: 300 },
    });
    const escalation = await fixture.start([escalate('the customer disputes a charge'), final('Answered.')], {
      budget: { max_seconds: 300 },
    });
    const topup = await fixture.start([final('Done with the extra step.')], {
      budget: { max_steps: 1, max_seconds: 300 },
      topup_wait_seconds: 300,
    });
    const customer = await fixture.start([message('Hello, how can I help?')], {
      conversation: {},
      budget: { max_seconds: 300 },
    });
    const consent = await fixture.start(
      byStep({
        1: tool('find_user_id_by_email', { email: IVAN.email }),
        2: tool('cancel_pending_order', { order_id: IVAN.order, reason: 'no longer needed' }),
        3: final(`Order ${IVAN.order} is cancelled.`),
      }),
      retailConversation(),
    );
    const expected: Array<[string, WaitKind]> = [
      [approval.id, 'approval'],
      [escalation.id, 'escalation'],
      [topup.id, 'topup'],
      [customer.id, 'customer'],
      [consent.id, 'consent'],
    ];
    for (const [id, kind] of expected) await waitsFor(id, kind);

    // The worker's gauge counts them too (the namespace's count: other files' runs may add to it).
    const metricsUrl = /metrics=(http:\/\/\S+\/metrics)/.exec(fixture.worker.output())?.[1];
    assert.ok(metricsUrl, fixture.worker.output());
    const gauge = await eventually('agent_runs_waiting for every kind', async () => {
      const text = await (await fetch(metricsUrl)).text();
      const samples = new Map(
        [...text.matchAll(/^agent_runs_waiting\{kind="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]),
      );
      return expected.every(([, kind]) => (samples.get(kind) ?? 0) >= 1) ? samples : undefined;
    });
    assert.deepEqual([...gauge.keys()].sort(), ['approval', 'consent', 'customer', 'escalation', 'topup']);

    // No kind: every run waiting for a person, each with the command that answers it.
    const rows = await inboxUntil([], (r) => expected.every(([id]) => r.some((row) => row.workflow_id === id)));
    for (const [id, kind] of expected) {
      const row = rows.find((r) => r.workflow_id === id)!;
      assert.deepEqual({ waiting: row.waiting, next: row.next }, { waiting: kind, next: nextCommand(kind, id) });
    }
    // One kind: only runs in that wait.
    const consents = await inboxUntil(['consent'], (r) => r.some((row) => row.workflow_id === consent.id));
    assert.ok(
      consents.every((r) => r.waiting === 'consent'),
      JSON.stringify(consents),
    );
    // The text form: the row with its next command, the query used and the Web UI's list filtered by it.
    const text = await cli(['list', '--waiting', 'approval,escalation', '--limit', '1000']);
    assert.match(text, new RegExp(`^${approval.id} +approval +agent approve ${approval.id} \\| agent reject`, 'm'));
    assert.match(text, new RegExp(`^${escalation.id} +escalation +agent answer ${escalation.id} TEXT`, 'm'));
    const query = `WorkflowType = 'reactAgent' AND ExecutionStatus = 'Running' AND AgentWaiting IN ("approval", "escalation")`;
    assert.ok(text.includes(`\nquery: ${query}\n`), text);
    assert.ok(
      text.includes(
        `\nWeb UI: ${fixture.env.uiUrl}/namespaces/${encodeURIComponent(fixture.env.namespace)}/workflows?query=${encodeURIComponent(query)}\n`,
      ),
      text,
    );

    // Answered: each run goes on and waits for nobody.
    await cli(['reject', approval.id, '--reason', 'not this time']);
    await cli(['answer', escalation.id, 'the charge is right']);
    await cli(['extend', topup.id, '--steps', '2', '--reason', 'one more step']);
    await sayToRun(fixture.client, consent.id, { text: 'yes' });
    for (const run of [approval, escalation, topup, consent]) {
      assert.equal((await runResult(run.handle)).status, 'ok', run.id);
      assert.deepEqual(
        { ...(await attributes(run.id)), runId: undefined },
        { waiting: 'none', status: 'ok', runId: undefined },
      );
    }
    // Cancelled while it waited for the customer.
    await cli(['cancel', customer.id, '--reason', 'inbox test']);
    assert.equal((await runResult(customer.handle)).stop_reason, 'cancelled');
    assert.deepEqual(
      { ...(await attributes(customer.id)), runId: undefined },
      { waiting: 'none', status: 'cancelled', runId: undefined },
    );
    // Ended runs are in the inbox's `none`, and out of the rest.
    const ended = expected.map(([id]) => id);
    await inboxUntil(['none'], (r) => ended.every((id) => r.some((row) => row.workflow_id === id && row.next === '-')));
    const left = await inboxUntil([], (r) => ended.every((id) => !r.some((row) => row.workflow_id === id)));
    assert.ok(left.every((r) => r.waiting !== 'none'));
  });

  it('after a worker restart the new worker replays the wait and clears it when answered', async () => {
    const { id, handle } = await fixture.start([escalate('a person must decide'), final('Answered.')], {
      budget: { max_seconds: 300 },
    });
    await waitsFor(id, 'escalation');
    await fixture.worker.kill();
    const second = fixture.startWorker();
    await second.ready;
    // Still in the inbox with no worker in between, and answered through the new worker.
    await inboxUntil(['escalation'], (r) => r.some((row) => row.workflow_id === id));
    await cli(['answer', id, 'go ahead']);
    assert.equal((await runResult(handle)).stop_reason, 'success');
    assert.equal((await attributes(id)).waiting, 'none');
    const events = (await handle.fetchHistory()).events ?? [];
    assert.equal(events.filter((e) => e.workflowTaskFailedEventAttributes).length, 0, 'no nondeterminism');
  });

  it('after a reset (Temporal CLI) the re-run waits again and says so; answered, none', async () => {
    const id = uniqueId('inbox-reset');
    // By step, so the re-run is answered like the first run.
    fixture.llm.script(id, byStep({ 1: escalate('a person must decide'), 2: final('Answered.') }));
    await cli(['run', 'User 42 asked: is my charge right?', '--user', '42', '--id', id, '--max-seconds', '300']);
    await waitsFor(id, 'escalation');
    await cli(['answer', id, 'yes']);
    await eventually('the first run ended', async () => ((await attributes(id)).status === 'ok' ? true : undefined));
    const ended = await attributes(id);
    assert.equal(ended.waiting, 'none');
    const resetCli = await resetToFirstWorkflowTask(fixture.env, id, 'inbox test re-does the run');
    assert.equal(resetCli.code, 0, resetCli.stderr);
    await eventually('the re-run waiting for the escalation', async () => {
      const now = await attributes(id);
      return now.runId !== ended.runId && now.waiting === 'escalation' ? true : undefined;
    });
    await inboxUntil(['escalation'], (r) => r.some((row) => row.workflow_id === id));
    await cli(['answer', id, 'yes, again']);
    await eventually('the re-run ended', async () => ((await attributes(id)).status === 'ok' ? true : undefined));
    assert.equal((await attributes(id)).waiting, 'none');
  });

  it('after a reset to a later workflow task (the one that took the answer), the re-run still waits and says so', async () => {
    const id = uniqueId('inbox-reset-late');
    fixture.llm.script(
      id,
      byStep({
        1: escalate('a person must decide first'),
        2: tool('get_user_profile', { user_id: 42 }),
        3: escalate('a person must decide again'),
        4: final('Answered twice.'),
      }),
    );
    await cli(['run', 'User 42 asked: is my charge right?', '--user', '42', '--id', id, '--max-seconds', '300']);
    await waitsFor(id, 'escalation');
    await cli(['answer', id, 'first answer']);
    // The second wait: its decision was asked for, then the run waits again.
    await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 3, 30_000);
    await waitsFor(id, 'escalation');
    await cli(['answer', id, 'second answer']);
    await eventually('the first run ended', async () => ((await attributes(id)).status === 'ok' ? true : undefined));
    const ended = await attributes(id);
    assert.equal(ended.waiting, 'none');

    // The workflow task that took the second answer: the last one completed before its acceptance.
    const events = (await fixture.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const accepted = events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    assert.equal(accepted.length, 2, 'two answers');
    const acceptedAt = Number(accepted[1]!.eventId);
    const tookAnswer = events
      .filter((e) => e.workflowTaskCompletedEventAttributes && Number(e.eventId) < acceptedAt)
      .at(-1)!;
    const waitingUpserts = events.filter((e) =>
      Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).includes(
        'AgentWaiting',
      ),
    );
    assert.ok(
      waitingUpserts.filter((e) => Number(e.eventId) < Number(tookAnswer.eventId)).length >= 3,
      'escalation, none, escalation before the reset point',
    );
    // Without re-applying the answer: the operator re-does it.
    const resetCli = await temporalCli(fixture.env, [
      'workflow',
      'reset',
      '--workflow-id',
      id,
      '--event-id',
      String(tookAnswer.eventId),
      '--reapply-exclude',
      'Update',
      '--reason',
      'inbox test re-does the second answer',
    ]);
    assert.equal(resetCli.code, 0, resetCli.stderr);
    const reset = await eventually('the re-run', async () => {
      const now = await attributes(id);
      return now.runId !== ended.runId ? now : undefined;
    });
    // Exact from the re-run's first moment: the value of the point it was reset to, never `none`.
    assert.equal(reset.waiting, 'escalation');
    assert.equal(reset.status, 'running');
    await inboxUntil(['escalation'], (r) => r.some((row) => row.workflow_id === id));
    await cli(['answer', id, 'second answer, again']);
    await eventually('the re-run ended', async () => ((await attributes(id)).status === 'ok' ? true : undefined));
    assert.equal((await attributes(id)).waiting, 'none');
    const rerun = (await fixture.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    assert.equal(rerun.filter((e) => e.workflowTaskFailedEventAttributes).length, 1, 'only the reset failed a task');
  });

  it('across continue-as-new the next run says what it waits for', async () => {
    const { id } = await fixture.start([message('Hello, how can I help?'), message('Anything else?')], {
      conversation: {},
      continue_as_new_every: 1,
      budget: { max_seconds: 300 },
    });
    await waitsFor(id, 'customer');
    const first = (await attributes(id)).runId;
    await sayToRun(fixture.client, id, { text: 'I have a question.' });
    // The second message is asked by the next run of the chain, which waits for the customer too.
    await eventually('the next run waiting for the customer', async () => {
      const now = await attributes(id);
      return now.runId !== first && now.waiting === 'customer' ? true : undefined;
    });
    await cli(['cancel', id]);
    await eventually('the chain cancelled', async () =>
      (await attributes(id)).status === 'cancelled' ? true : undefined,
    );
    assert.equal((await attributes(id)).waiting, 'none');
  });

  it('a hostile --waiting value is one line that lists the kinds, never a stack or a query', async () => {
    for (const value of [
      'approval" OR AgentStatus = "ok',
      "approval' OR 1=1",
      'x\n\x1b[2J\u009b31mboom',
      'a'.repeat(5000),
      'none;DROP',
    ]) {
      const r = await runCli(fixture.env, ['list', '--waiting', value]);
      assert.equal(r.code, 2, `${JSON.stringify(value)}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, /use approval, escalation, customer, consent, topup, none/);
      assert.ok(lines[0]!.length < 300, lines[0]);
      assert.ok(![...lines[0]!].some((c) => c < ' ' || (c >= '\x7f' && c <= '\x9f')), lines[0]);
      assert.doesNotMatch(r.stderr, /\bat \S+ \(|WorkflowType/);
    }
    // `--waiting` alone, before another flag: every kind a person answers.
    const q = await runCli(fixture.env, ['list', '--waiting', '--query']);
    assert.equal(q.code, 0, q.stderr);
    assert.equal(
      q.stdout.trim(),
      `WorkflowType = 'reactAgent' AND ExecutionStatus = 'Running' AND AgentWaiting IN ("approval", "escalation", "customer", "consent", "topup")`,
    );
  });
});
