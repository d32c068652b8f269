// Found by an adversary: the race of adv-stuck-race without a person at the keyboard, as in cron or CI with
// --yes. `cancel --stuck` asks every old run's `state` first (5 s each for runs no worker serves,
// 8 at a time), then cancels: with a few dozen dead runs the gap between asking a run and cancelling
// it is many seconds. A run that escalates to a person in that gap is cancelled anyway.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';
import { runCli } from '../helpers/cli';
import { escalate, final } from '../../offline-model/scripted-replies';

const fixture = agentFixture({ queue: 'adv-stuck-race-yes' });
const DEAD_RUNS = 24;

describe('cancel --stuck --yes and a run that escalates while dead runs are asked', () => {
  it('does not cancel a run that awaits a person when the cancel is sent', async () => {
    const noWorker = fixture.queue('adv-no-worker');
    for (let i = 0; i < DEAD_RUNS; i++) await fixture.start([final('never')], {}, { on: noWorker });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { id, handle } = await fixture.start(async () => {
      await gate;
      return escalate('a person must decide');
    });
    await eventually('the run asks the model for step 1', () =>
      fixture.llm.requests(id).length > 0 ? true : undefined,
    );

    const cli = runCli(
      fixture.env,
      ['cancel', '--stuck', '--older-than', '1ms', '--yes', '--no-wait', '-o', 'json'],
      {},
      120_000,
    );
    // The CLI has asked the newest run (listed first) within a few seconds; the dead runs take 15 s.
    await sleep(6_000);
    release();
    const { stdout, stderr } = await cli;

    const events = (await handle.fetchHistory()).events ?? [];
    const decided = events.findIndex((e) => e.activityTaskCompletedEventAttributes);
    const cancelled = events.findIndex((e) => e.workflowExecutionCancelRequestedEventAttributes);
    const listed = (JSON.parse(stdout) as { runs: Array<{ workflow_id: string }> }).runs.some(
      (r) => r.workflow_id === id,
    );
    assert.ok(listed, 'the run was deciding when asked, so it is listed as stuck (else the race was not hit)');
    // The escalation (the decision, then the wait for a person) is in the history before the cancel request.
    assert.ok(
      cancelled === -1 || decided === -1 || cancelled < decided,
      `a run that escalated to a person before the cancel was cancelled without --include-waiting:\n${stderr}`,
    );
  });
});
