// The kill switch under the faults it exists for, through the CLI on a real server with real
// worker processes: a run that has ended is reported as ended (non-zero exit), a cancel reaches
// the latest run of a continue-as-new chain, `cancel --stuck` judges a run by its chain's start,
// and a run whose worker is gone is diagnosed after the grace period and ended by --terminate.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { final, tool } from '../../offline-model/scripted-replies';
import { runResult, startRun } from '../../client/agent-client';
import { requestCancel } from '../../cli/cancel-run';
import { describeChain } from '../../client/run-chain';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

const WORKER_ENV = { OPENAI_TIMEOUT_SECONDS: '300' };
const fixture = agentFixture({ queue: 'cancel-faults', workerEnv: WORKER_ENV });

function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got: ${stderr}`);
  return lines[0]!;
}

/** The chain's latest run ended Canceled, and its cancel request carried `reason`. */
async function assertLatestRunCancelled(id: string, reason: string) {
  const latest = await fixture.client.workflow.getHandle(id).describe();
  assert.equal(latest.status.name, 'CANCELLED');
  const events = (await fixture.client.workflow.getHandle(id, latest.runId).fetchHistory()).events ?? [];
  const requested = events.find((e) => e.workflowExecutionCancelRequestedEventAttributes);
  assert.equal(requested?.workflowExecutionCancelRequestedEventAttributes?.cause, reason);
  return latest;
}

async function runsOf(id: string): Promise<Array<{ runId: string; status: string }>> {
  const runs: Array<{ runId: string; status: string }> = [];
  for await (const info of fixture.client.workflow.list({ query: `WorkflowId = '${id}'` }))
    runs.push({ runId: info.runId, status: info.status.name });
  return runs;
}

describe('agent cancel: ended runs', () => {
  it('reports a run that has ended as ended, with its stop reason, and a non-zero exit', async () => {
    const id = uniqueId('ended');
    fixture.llm.script(id, [tool('get_user_profile', { user_id: 42 })]);
    const handle = await startRun(fixture.client, fixture.env, agentInput({ budget: { max_steps: 1 } }), id);
    assert.equal((await runResult(handle)).stop_reason, 'max_steps');

    for (const [args, verb] of [
      [['cancel', id], 'cancel'],
      [['cancel', id, '--no-wait'], 'cancel'],
      [['cancel', id, '--terminate'], 'terminate'],
    ] as const) {
      const r = await runCli(fixture.env, [...args]);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, '', 'nothing claims a cancel was requested');
      assert.equal(
        oneLine(r.stderr),
        `agent: run ${id} already ended: COMPLETED (stop reason max_steps); nothing to ${verb}`,
      );
    }
    const events = (await handle.fetchHistory()).events ?? [];
    assert.ok(!events.some((e) => e.workflowExecutionCancelRequestedEventAttributes));
  });

  it('a run that ends between the check and the request is reported as ended, not as cancelled', async () => {
    const id = uniqueId('race');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    fixture.llm.script(id, async () => {
      await gate;
      return final('done');
    });
    const handle = await startRun(fixture.client, fixture.env, agentInput(), id);
    await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 1, 20_000);
    const chain = await describeChain(fixture.client, id); // what `agent cancel` saw: RUNNING
    assert.equal(chain.description.status.name, 'RUNNING');

    release();
    assert.equal((await runResult(handle)).stop_reason, 'success');
    // Temporal itself accepts a cancel of a closed run as a no-op, without an error...
    await fixture.client.workflowService.requestCancelWorkflowExecution({
      namespace: fixture.env.namespace,
      workflowExecution: { workflowId: id },
      reason: 'raw',
    });
    // ... so the kill switch looks, and says the run had ended.
    assert.equal(await requestCancel(fixture.client, chain, 'too late'), 'ended');
  });
});

describe('agent cancel: continue-as-new chains', () => {
  it('cancels the latest run of the chain, waits for it to end and says how it ended', async () => {
    const id = uniqueId('chain');
    const { handle } = await fixture.start(
      (req) =>
        req.step === 1
          ? tool('get_user_profile', { user_id: 42 })
          : req.step === 2
            ? tool('get_user_billing', { user_id: 42 })
            : { hang: true },
      { continue_as_new_every: 1, budget: { max_seconds: 120 } },
      { id },
    );
    const hanging = await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 3, 30_000);
    const current = await fixture.client.workflow.getHandle(id).describe();
    assert.notEqual(current.runId, handle.firstExecutionRunId, 'the chain has continued as new');

    const r = await runCli(fixture.env, ['cancel', id, '--reason', 'chain test']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`^cancel requested for ${id} \\(run ${current.runId}; reason: chain test\\)$`, 'm'),
    );
    assert.match(r.stdout, new RegExp(`^${id} ended: CANCELLED \\(stop reason cancelled\\)$`, 'm'));
    await fixture.llm.waitForAbort((x) => x.id === hanging.id, 10_000);

    const latest = await assertLatestRunCancelled(id, 'chain test');
    assert.equal(latest.runId, current.runId);
    const runs = await eventually('all runs of the chain listed as closed', async () => {
      const listed = await runsOf(id);
      return listed.length === 3 && listed.every((x) => x.status !== 'RUNNING') ? listed : undefined;
    });
    assert.deepEqual(runs.map((x) => x.status).sort(), ['CANCELLED', 'CONTINUED_AS_NEW', 'CONTINUED_AS_NEW']);
    assert.equal(fixture.llm.requests(id).length, 3, 'no decision after the cancel');
  });

  it("a run listed before it continued as new is still cancelled, in the chain's latest run", async () => {
    const id = uniqueId('stale');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { handle } = await fixture.start(
      async (req) => {
        if (req.step !== 1) return { hang: true };
        await gate;
        return tool('get_user_profile', { user_id: 42 });
      },
      { continue_as_new_every: 1, budget: { max_seconds: 120 } },
      { id },
    );
    await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 1, 20_000);
    // What `cancel --stuck` read from its listing: the first run, then running.
    const listed = await describeChain(fixture.client, id, handle.firstExecutionRunId);
    release();
    const hanging = await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 2, 20_000);
    const stale = await fixture.client.workflow.getHandle(id, handle.firstExecutionRunId).describe();
    assert.equal(stale.status.name, 'CONTINUED_AS_NEW', 'the listed run is stale now');

    assert.equal(await requestCancel(fixture.client, listed, 'stale listing'), 'requested');
    await fixture.llm.waitForAbort((x) => x.id === hanging.id, 10_000);
    const latest = await eventually('the latest run cancelled', async () => {
      const d = await fixture.client.workflow.getHandle(id).describe();
      return d.status.name === 'CANCELLED' ? d : undefined;
    });
    assert.notEqual(latest.runId, handle.firstExecutionRunId);
  });

  it("cancel --stuck and list --older-than judge a run by its chain's start, not its current run's", async () => {
    const id = uniqueId('old-chain');
    // Step 1 takes 8 s, then the run continues as new: an old chain whose current run is young.
    const { handle } = await fixture.start(
      (req) => (req.step === 1 ? tool('get_user_profile', { user_id: 42 }, { delayMs: 8_000 }) : { hang: true }),
      { continue_as_new_every: 1, budget: { max_seconds: 120 } },
      { id },
    );
    await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 2, 30_000);
    const current = await fixture.client.workflow.getHandle(id).describe();
    const first = await fixture.client.workflow.getHandle(id, handle.firstExecutionRunId).describe();
    assert.notEqual(current.runId, first.runId);
    await eventually('the current run visible as running', async () =>
      (await runsOf(id)).some((x) => x.runId === current.runId && x.status === 'RUNNING') ? true : undefined,
    );
    // A cutoff half-way between the chain's start and the current run's (the CLI starts a little later).
    const olderThan = () =>
      `${Date.now() - Math.round((first.startTime.getTime() + current.startTime.getTime()) / 2)}ms`;

    const listed = await runCli(fixture.env, [
      'list',
      '--status',
      'running',
      '--older-than',
      olderThan(),
      '--json',
      '--limit',
      '1000',
    ]);
    assert.equal(listed.code, 0, listed.stderr);
    const row = (JSON.parse(listed.stdout) as Array<Record<string, unknown>>).find((x) => x.workflow_id === id);
    assert.ok(row, `list --older-than finds the chain: ${listed.stdout}`);
    assert.equal(row.run_id, current.runId);
    assert.equal(row.chain_start_time, first.startTime.toISOString());

    const dry = await runCli(fixture.env, ['cancel', '--stuck', '--older-than', olderThan(), '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, new RegExp(`${id}\\s+${current.runId}`));
    assert.equal(
      await fixture.client.workflow
        .getHandle(id)
        .describe()
        .then((d) => d.status.name),
      'RUNNING',
    );

    const done = await runCli(fixture.env, [
      'cancel',
      '--stuck',
      '--older-than',
      olderThan(),
      '--yes',
      '--reason',
      'old chain',
      '--wait',
      '15s',
    ]);
    assert.match(done.stdout, new RegExp(`^ {2}${id} \\(${current.runId}\\): cancel requested$`, 'm'));
    assert.match(done.stdout, new RegExp(`^ {2}${id}: CANCELLED \\(stop reason cancelled\\)$`, 'm'));
    // Runs other test files left behind may still run (exit 3); ours is not among them.
    assert.ok(done.code === 0 || done.code === 3, done.stdout + done.stderr);
    assert.doesNotMatch(done.stdout, new RegExp(`${id}: STILL RUNNING`));

    await assertLatestRunCancelled(id, 'old chain');
  });
});

describe('agent cancel: a run no worker processes', () => {
  it('says after the grace period that no worker takes its tasks, exit 3; --terminate ends it with the reason in history', async () => {
    const goneEnv = fixture.queue('gone');
    const gone = fixture.startWorker(WORKER_ENV, goneEnv);
    await gone.ready;
    const id = uniqueId('no-worker');
    fixture.llm.script(id, [{ hang: true }]);
    await startRun(fixture.client, goneEnv, agentInput({ budget: { max_seconds: 300 } }), id);
    await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 1, 20_000);
    await gone.kill();

    const r = await runCli(goneEnv, ['cancel', id, '--wait', '8s']);
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`^cancel requested for ${id} `, 'm'));
    const why = oneLine(r.stderr);
    assert.match(
      why,
      new RegExp(`^agent: ${id} is still running 8s after the cancel: .*no worker.*task queue "${goneEnv.taskQueue}"`),
    );
    assert.match(why, new RegExp(`end it with \`agent cancel ${id} --terminate\`$`));
    assert.equal((await fixture.client.workflow.getHandle(id).describe()).status.name, 'RUNNING');

    const t = await runCli(goneEnv, [
      'cancel',
      id,
      '--terminate',
      '--reason',
      'worker gone: cancel cannot be processed',
    ]);
    assert.equal(t.code, 0, t.stdout + t.stderr);
    assert.match(t.stdout, new RegExp(`^terminated ${id} `, 'm'));
    assert.match(t.stdout, /does not reconcile effects in flight/);
    assert.match(t.stdout, new RegExp(`refunds service by idempotency key \\(this run's keys start with "${id}:"\\)`));
    const handle = fixture.client.workflow.getHandle(id);
    assert.equal((await handle.describe()).status.name, 'TERMINATED');
    const last = ((await handle.fetchHistory()).events ?? []).at(-1);
    assert.equal(last?.workflowExecutionTerminatedEventAttributes?.reason, 'worker gone: cancel cannot be processed');
  });
});
