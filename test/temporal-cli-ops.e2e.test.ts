// Operators act on runs with Temporal's own CLI, not only with `agent`: a batch cancel by
// visibility query during an incident, and `temporal workflow show --output json` of a run that
// reconciled an effect, replayed against the current workflow code. Both must keep the guarantees:
// every run ends `cancelled` with its effects recorded, and the exported history replays.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { ScriptedLlmServer } from '../scripts/scripted-llm-server';
import { runResult, startRun } from '../client/agent-client';
import { answerApproval, pendingApproval } from '../client/approvals';
import type { TemporalEnv } from '../runtime/temporal-env';
import { NO_METRICS_SINKS } from '../worker/metrics';
import { agentInput, connectClient, eventually, startWorkerProcess, testEnv, uniqueId } from './helpers/harness';
import type { WorkerProcess } from './helpers/harness';
import {
  billingOf,
  finalAnswer,
  REFUND_ALLOW,
  refundFixture,
  refundGoal,
  refundOf,
  tool,
} from './helpers/refund-fixtures';
import type { RefundFixture } from './helpers/refund-fixtures';

const exec = promisify(execFile);

let llm: ScriptedLlmServer;
let client: Client;
let env: TemporalEnv;
let worker: WorkerProcess;
let fx: RefundFixture;

function temporal(args: string[]) {
  const cli = process.env.TEMPORAL_CLI_PATH;
  assert.ok(cli, 'TEMPORAL_CLI_PATH is set by `npm test`');
  return exec(cli, [...args, '--address', env.address, '--namespace', env.namespace], { maxBuffer: 64 * 1024 * 1024 });
}

before(async () => {
  llm = await ScriptedLlmServer.start();
  fx = refundFixture();
  env = testEnv(uniqueId('tctl-ops'));
  // The refund's first attempt commits, then stalls before reporting: cut off after the money moved.
  worker = startWorkerProcess(env, {
    OPENAI_BASE_URL: llm.baseUrl,
    ...fx.workerEnv,
    AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: '60000',
  });
  await worker.ready;
  client = await connectClient(env);
});

after(async () => {
  await worker?.kill();
  await client?.connection.close();
  await llm?.close();
  fx?.cleanup();
});

describe("Temporal's own CLI on agent runs", () => {
  it('`temporal workflow cancel --query` ends every matching run cancelled, effects reconciled; `workflow show` histories replay', async () => {
    // Two runs waiting on a hung LLM call, one whose refund has committed but not reported.
    const deciding = [uniqueId('batch-llm'), uniqueId('batch-llm')];
    for (const id of deciding) {
      llm.script(id, [tool('get_user_profile', { user_id: 42 }), { hang: true }]);
      await startRun(client, env, agentInput({ budget: { max_seconds: 300 } }), id);
    }
    const user = fx.nextUser();
    const refundId = uniqueId('batch-refund');
    llm.script(refundId, [billingOf(user), refundOf(user, 49), finalAnswer()]);
    const refundRun = await startRun(
      client,
      env,
      agentInput({ goal: refundGoal(user), user_id: user, allow: REFUND_ALLOW, budget: { max_seconds: 300 } }),
      refundId,
    );
    await eventually('the refund awaiting approval', () => pendingApproval(refundRun));
    await answerApproval(client, refundId, { decision: 'approve', operator: 'test' });
    await eventually(
      'the refund committed',
      () => (fx.service().list({ workflow_id: refundId })[0]?.state === 'confirmed' ? true : undefined),
      30_000,
    );
    for (const id of deciding) await llm.waitFor((r) => r.workflowId === id && r.step === 2, 20_000);

    const query = `TaskQueue = '${env.taskQueue}' AND ExecutionStatus = 'Running'`;
    await eventually('all three runs visible as running', async () => {
      let n = 0;
      for await (const _ of client.workflow.list({ query })) n++;
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
      const handle = client.workflow.getHandle(id);
      const result = await runResult(handle);
      assert.equal(result.stop_reason, 'cancelled', id);
      assert.equal((await handle.describe()).status.name, 'CANCELLED');
    }
    const refund = await runResult(client.workflow.getHandle(refundId));
    const rows = fx.service().list({ workflow_id: refundId });
    assert.deepEqual(
      rows.map((r) => r.state),
      ['confirmed'],
    );
    assert.deepEqual(
      refund.effects?.map((e) => [e.state, e.via, e.idempotency_key]),
      [['confirmed', 'reconcile', rows[0]!.idempotency_key]],
      "the refund that moved money is in the cancelled run's result",
    );

    // An operator exports a history with `temporal workflow show` and replays it on the current code.
    const { stdout } = await temporal(['workflow', 'show', '--workflow-id', refundId, '--output', 'json']);
    const history = historyFromJSON(JSON.parse(stdout));
    const scheduled = (history.events ?? []).flatMap((e) =>
      e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : [],
    );
    assert.deepEqual(scheduled, ['decide', 'get_user_billing', 'decide', 'issue_refund', 'reconcile_issue_refund']);
    await Worker.runReplayHistory(
      { workflowsPath: require.resolve('../workflows'), sinks: NO_METRICS_SINKS },
      history,
      refundId,
    );
  });
});
