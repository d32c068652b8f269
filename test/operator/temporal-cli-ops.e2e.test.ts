// Operators act on runs with Temporal's own CLI, not only with `agent`: a batch cancel by
// visibility query during an incident, and `temporal workflow show --output json` of a run that
// reconciled an effect, replayed against the current workflow code. Both must keep the guarantees:
// every run ends `cancelled` with its effects recorded, and the exported history replays.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { runResult, startRun } from '../../client/agent-client';
import { answerApproval, pendingApproval } from '../../client/approvals';
import { NO_METRICS_SINKS } from '../../worker/metrics';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { billingOf, REFUND_ALLOW, refundGoal, refundOf, tool } from '../helpers/refund-fixtures';

const exec = promisify(execFile);

function temporal(args: string[]) {
  const cli = process.env.TEMPORAL_CLI_PATH;
  assert.ok(cli, 'TEMPORAL_CLI_PATH is set by `npm test`');
  return exec(cli, [...args, '--address', fixture.env.address, '--namespace', fixture.env.namespace], {
    maxBuffer: 64 * 1024 * 1024,
  });
}

// The refund's first attempt commits, then stalls before reporting: cut off after the money moved (or,
// on a slow server, reported by its retry before the cancel: the test then checks that path).
const fixture = agentFixture({
  queue: 'tctl-ops',
  refunds: true,
  workerEnv: { AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: '60000' },
});

describe("Temporal's own CLI on agent runs", () => {
  it('`temporal workflow cancel --query` ends every matching run cancelled, effects reconciled; `workflow show` histories replay', async () => {
    // Two runs waiting on a hung LLM call, one whose refund has committed but not reported.
    const deciding = [uniqueId('batch-llm'), uniqueId('batch-llm')];
    for (const id of deciding) {
      fixture.llm.script(id, [tool('get_user_profile', { user_id: 42 }), { hang: true }]);
      await startRun(fixture.client, fixture.env, agentInput({ budget: { max_seconds: 300 } }), id);
    }
    const user = fixture.refunds.nextUser();
    const refundId = uniqueId('batch-refund');
    // After the refund the model hangs: the run cannot end on its own before the batch cancel, whether the
    // stalled attempt is still out or (heartbeat timeout, on a loaded server) a retry has reported by then.
    fixture.llm.script(refundId, [billingOf(user), refundOf(user, 49), { hang: true }]);
    const refundRun = await startRun(
      fixture.client,
      fixture.env,
      agentInput({
        goal: refundGoal(user),
        principal: String(user),
        allow: REFUND_ALLOW,
        budget: { max_seconds: 300 },
      }),
      refundId,
    );
    await eventually('the refund awaiting approval', () => pendingApproval(refundRun));
    await answerApproval(fixture.client, refundId, { decision: 'approve', operator: 'test' });
    await eventually(
      'the refund committed',
      async () =>
        (await fixture.refunds.rows({ workflow_id: refundId }))[0]?.state === 'confirmed' ? true : undefined,
      30_000,
    );
    for (const id of deciding) await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 2, 20_000);

    const query = `TaskQueue = '${fixture.env.taskQueue}' AND ExecutionStatus = 'Running'`;
    await eventually('all three runs visible as running', async () => {
      let n = 0;
      for await (const _ of fixture.client.workflow.list({ query })) n++;
      return n === 3 ? true : undefined;
    });
    await temporal([
      'workflow',
      'cancel',
      '--query',
      query,
      '--reason',
      'incident 42: stop every agent on this queue',
      '--yes',
    ]);

    for (const id of [...deciding, refundId]) {
      const handle = fixture.client.workflow.getHandle(id);
      const result = await runResult(handle);
      assert.equal(result.stop_reason, 'cancelled', id);
      assert.equal((await handle.describe()).status.name, 'CANCELLED');
    }
    const refund = await runResult(fixture.client.workflow.getHandle(refundId));
    const rows = await fixture.refunds.rows({ workflow_id: refundId });
    assert.deepEqual(
      rows.map((r) => r.state),
      ['confirmed'],
    );
    // Reported by its retry or found by the cancel's reconcile: either way once, confirmed, in the result.
    assert.deepEqual(
      refund.effects?.map((e) => [e.state, e.idempotency_key]),
      [['confirmed', rows[0]!.idempotency_key]],
      "the refund that moved money is in the cancelled run's result",
    );

    // An operator exports a history with `temporal workflow show` and replays it on the current code.
    const { stdout } = await temporal(['workflow', 'show', '--workflow-id', refundId, '--output', 'json']);
    const history = historyFromJSON(JSON.parse(stdout));
    const scheduled = (history.events ?? []).flatMap((e) =>
      e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : [],
    );
    const cutOff = refund.effects?.[0]?.via === 'reconcile';
    // get_user_billing is a local activity (a marker, not a scheduled activity).
    assert.deepEqual(scheduled, [
      'decide',
      'decide',
      'issue_refund',
      // Cut off while the refund was out: looked up by key; reported by its retry: the next decision hung.
      cutOff ? 'reconcile_issue_refund' : 'decide',
    ]);
    await Worker.runReplayHistory(
      { workflowsPath: require.resolve('../../workflows'), sinks: NO_METRICS_SINKS },
      history,
      refundId,
    );
  });
});
