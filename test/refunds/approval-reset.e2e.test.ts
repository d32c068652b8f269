// An operator re-does a finished refund run with Temporal's own CLI (`temporal workflow reset`):
// the re-run waits for approval again, `agent approve` is taken (the update id names the run, so
// the pre-reset run's answer is not replayed to it), the run completes, and the refunds service
// still holds exactly one confirmed refund (the re-run's refund reconciles by the shared key).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { byStep } from '../../offline-model/scripted-replies';
import { existingRun } from '../../client/agent-client';
import { pendingApproval } from '../../client/approvals';
import type { AgentResult } from '../../common/types';
import { eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { resetToFirstWorkflowTask } from '../helpers/temporal-cli-run';
import { billingOf, finalAnswer, refundOf, refundRunArgs } from '../helpers/refund-fixtures';

const fixture = agentFixture({ queue: 'reset', refunds: true });

async function cli(args: string[]) {
  const r = await runCli(fixture.env, args, { AGENT_OPERATOR: 'test-operator' });
  assert.equal(r.code, 0, `agent ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

/** Waits until the workflow id's current run (not `notRunId`) asks for approval. */
async function pendingIn(id: string, notRunId?: string) {
  return eventually('a call awaiting approval', async () => {
    const handle = await existingRun(fixture.client, id);
    const { runId, status } = await handle.describe();
    if (runId === notRunId || status.name !== 'RUNNING') return undefined;
    return pendingApproval(handle);
  });
}

describe('temporal workflow reset, then agent approve', () => {
  it('the re-run waits for approval again, takes it, completes; still exactly one confirmed refund', async () => {
    const user = fixture.refunds.nextUser();
    const id = uniqueId('reset-refund');
    // By step, so the re-run is answered like the first run.
    fixture.llm.script(id, byStep({ 1: billingOf(user), 2: refundOf(user, 49), 3: finalAnswer() }));

    await cli(refundRunArgs(user, id, 120));
    const first = await pendingIn(id);
    await cli(['approve', id]);
    const before = JSON.parse(await cli(['result', id, '--json'])) as AgentResult;
    assert.equal(before.stop_reason, 'success');
    const firstRunId = (await fixture.client.workflow.getHandle(id).describe()).runId;
    assert.deepEqual(
      (await fixture.refunds.rows({ workflow_id: id })).map((r) => r.state),
      ['confirmed'],
    );

    // The operator re-does the run with Temporal's own CLI.
    const reset = await resetToFirstWorkflowTask(fixture.env, id, 'operator re-does the refund run');
    assert.equal(reset.code, 0, reset.stderr);
    const again = await pendingIn(id, firstRunId);
    assert.equal(again.id, first.id, 'the re-run waits for the same call');

    const approved = await cli(['approve', id]);
    assert.match(approved, new RegExp(`^approved ${again.id} in ${id}: issue_refund`));
    const after = JSON.parse(await cli(['result', id, '--json'])) as AgentResult;
    assert.equal(after.stop_reason, 'success');
    const current = await fixture.client.workflow.getHandle(id).describe();
    assert.notEqual(current.runId, firstRunId);
    assert.equal(current.status.name, 'COMPLETED');

    // The refund key is shared by both runs: the re-run found the first refund instead of paying twice.
    const rows = await fixture.refunds.rows({ workflow_id: id });
    assert.deepEqual(
      rows.map((r) => [r.state, r.amount_usd]),
      [['confirmed', 49]],
    );
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 1);
  });
});
