// Found by an adversary: `agent cancel --stuck` (docs/cli.md) leaves alone every kind of run rightly waiting for
// a person (an escalation, the customer's reply, an operator's top-up) and cancels the truly stuck
// ones: a run no worker serves, and a continue-as-new chain whose current run hangs on the model.
// `-o json` lists the cancelled under `runs` and the waiting under `skipped_waiting`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { agentFixture } from '../helpers/agent-fixture';
import type { StartedRun } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';
import { runCli } from '../helpers/cli';
import { escalate, final, message, profile } from '../../offline-model/scripted-replies';
import { runState } from '../../client/agent-client';
import type { AgentState } from '../../common/types';

const fixture = agentFixture({ queue: 'adv-stuck-kinds' });

async function inPhase(run: StartedRun, phase: AgentState['phase']): Promise<void> {
  await eventually(`${run.id} in ${phase}`, async () =>
    (await runState(run.handle)).phase === phase ? true : undefined,
  );
}

async function cancelRequested(run: StartedRun): Promise<boolean> {
  const history = await fixture.client.workflow.getHandle(run.id).fetchHistory();
  return (history.events ?? []).some((e) => e.workflowExecutionCancelRequestedEventAttributes);
}

describe('cancel --stuck tells waiting runs from stuck ones', () => {
  it('skips the escalation, the conversation and the top-up wait; cancels the dead and the hung chain', async () => {
    const escalation = await fixture.start([escalate('a person must decide')]);
    const conversation = await fixture.start([message('Which order is it about?')], { conversation: {} });
    const topup = await fixture.start([profile(), final('done')], {
      budget: { max_steps: 1 },
      topup_wait_seconds: 600,
    });
    const dead = await fixture.start([final('never')], {}, { on: fixture.queue('adv-no-worker') });
    const hung = await fixture.start([profile(), { hang: true }], { continue_as_new_every: 1 });
    await inPhase(escalation, 'awaiting_approval');
    await inPhase(conversation, 'awaiting_customer');
    await inPhase(topup, 'awaiting_topup');
    await eventually('the hung chain continued as new', async () =>
      (await hung.handle.describe()).runId !== hung.handle.firstExecutionRunId ? true : undefined,
    );

    const cli = await runCli(fixture.env, [
      'cancel',
      '--stuck',
      '--older-than',
      '1ms',
      '--yes',
      '-o',
      'json',
      '--no-wait',
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    const report = JSON.parse(cli.stdout) as {
      runs: Array<{ workflow_id: string; outcome: string }>;
      skipped_waiting: Array<{ workflow_id: string; outcome: string; waits_for: string }>;
    };
    assert.deepEqual(report.runs.map((r) => r.workflow_id).sort(), [dead.id, hung.id].sort(), cli.stderr);
    assert.ok(
      report.runs.every((r) => r.outcome === 'cancel_requested'),
      cli.stdout,
    );
    assert.deepEqual(
      report.skipped_waiting.map((r) => r.workflow_id).sort(),
      [escalation.id, conversation.id, topup.id].sort(),
    );
    assert.ok(report.skipped_waiting.every((r) => r.outcome === 'skipped_waiting' && r.waits_for.length > 0));
    for (const waiting of [escalation, conversation, topup])
      assert.equal(await cancelRequested(waiting), false, waiting.id);
    for (const stuck of [dead, hung]) assert.equal(await cancelRequested(stuck), true, stuck.id);
  });
});
