// Adversary: "replay of older histories still works" for read-only tools as local activities
// (docs/runtime-semantics.md). Histories taken as an operator takes them (`temporal workflow show
// -o json`) from runs whose local reads stalled past their 5 s cut (a retried attempt, workflow task
// heartbeats), that continued as new after every step, and that were cancelled mid-read, replay
// against the current workflow code.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { billing, final, profile } from '../../offline-model/scripted-replies';
import { runResult, runState } from '../../client/agent-client';
import { NO_METRICS_SINKS } from '../../worker/metrics';
import { workflowCode } from '../../worker/workflow-bundle';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { eventually } from '../helpers/harness';
import { temporalCli } from '../helpers/temporal-cli-run';

const fixture = agentFixture({ queue: 'adv-local-replay', workerEnv: { AGENT_TOOL_PAUSE_MS: '7000' } });

async function runIds(id: string): Promise<string[]> {
  const listed = await temporalCli(fixture.env, ['workflow', 'list', '--query', `WorkflowId = '${id}'`, '-o', 'json']);
  assert.equal(listed.code, 0, listed.stderr);
  return (JSON.parse(listed.stdout) as Array<{ execution: { runId: string } }>).map((r) => r.execution.runId);
}

async function replayAll(id: string, runs: number): Promise<void> {
  const ids = await eventually(`the ${runs} runs of ${id} to be listed`, async () => {
    const found = await runIds(id);
    return found.length === runs ? found : undefined;
  });
  let markers = 0;
  for (const runId of ids) {
    const shown = await temporalCli(fixture.env, [
      'workflow',
      'show',
      '--workflow-id',
      id,
      '--run-id',
      runId,
      '-o',
      'json',
    ]);
    assert.equal(shown.code, 0, shown.stderr);
    const history = historyFromJSON(JSON.parse(shown.stdout));
    if (history.events?.some((e) => e.markerRecordedEventAttributes)) markers++;
    await Worker.runReplayHistory({ ...workflowCode(undefined).options, sinks: NO_METRICS_SINKS }, history, id);
  }
  assert.ok(markers > 0, 'a local read recorded its marker');
}

describe('histories with stalled local reads replay', () => {
  it('a chain that continued as new after every step', async () => {
    const run = await fixture.run([profile(42), billing(42), final('Done.')], { continue_as_new_every: 1 });
    assert.equal(run.result.stop_reason, 'success', JSON.stringify(run.result));
    const trace = await runCli(fixture.env, ['trace', run.id, '-o', 'jsonl']);
    assert.equal(trace.code, 0, trace.stderr);
    assert.match(trace.stdout, /get_user_billing/);
    await replayAll(run.id, 3);
  });

  it('a run cancelled in the middle of a local read', async () => {
    const { id, handle } = await fixture.start([profile(42), final('never')]);
    await eventually('the run to call its tool', async () =>
      (await runState(handle)).phase === 'calling_tool' ? true : undefined,
    );
    const cancelled = await runCli(fixture.env, ['cancel', id, '--reason', 'adversary']);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.equal((await runResult(handle)).stop_reason, 'cancelled');
    await replayAll(id, 1);
  });
});
