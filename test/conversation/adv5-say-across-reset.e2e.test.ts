// Adversary (docs/conversations.md, "A message sent as the run continues as new"): `say` addresses
// the conversation's chain, and a run re-done by `temporal workflow reset` is in the same chain.
// A message the run has admitted but not yet taken (its workflow task is held open by a slow
// local read) when an operator resets the run must land on the reset run, once; it is the same
// conversation, so the customer must not be told that another one now runs under the id.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { billing, final, message } from '../../offline-model/scripted-replies';
import type { RecordedRequest } from '../../offline-model/scripted-llm-server';
import { runResult } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import { eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { resetToFirstWorkflowTask } from '../helpers/temporal-cli-run';

const PAUSE_MS = 4000;
const fixture = agentFixture({
  queue: 'adv5-reset',
  workerEnv: { AGENT_TOOL_PAUSE_MS: String(PAUSE_MS), AGENT_TOOL_PAUSE_TOOLS: 'get_user_billing' },
});

const ADMITTED =
  temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED;

describe('adv5: a say in flight when the conversation run is reset', () => {
  it('lands on the reset run (same chain) once, or fails in one line; never "another conversation"', async () => {
    const id = uniqueId('adv5-reset');
    const TEXT = 'Please also check my invoice from May.';
    // Step 1: a slow local read (the workflow task stays open). Then: the final answer once the
    // customer's message is read, a question before.
    const script = (req: RecordedRequest) =>
      req.step === 1
        ? billing()
        : JSON.stringify(req.body).includes(TEXT)
          ? final('Done. Bye.')
          : message('Anything else?');
    const { handle } = await fixture.start(script, { conversation: {}, budget: { max_seconds: 120 } }, { id });
    const before = await handle.describe();
    await eventually('the slow read under way', () =>
      /tool pause: get_user_billing/.test(fixture.worker.output()) ? true : undefined,
    );

    // A client like the CLI's whose Update ids the test sees (to know the run has admitted it).
    const updateIds: string[] = [];
    const spy = new Client({
      connection: fixture.client.connection,
      namespace: fixture.env.namespace,
      dataConverter: fixture.client.options.dataConverter,
      interceptors: {
        workflow: [
          {
            async startUpdate(input, next) {
              if (input.options.updateId) updateIds.push(input.options.updateId);
              return next(input);
            },
          },
        ],
      },
    });
    const said = sayToRun(spy, id, { text: TEXT }).then(
      (receipt) => ({ receipt }),
      (err: unknown) => ({ err }),
    );
    await eventually('the say admitted by the run', async () => {
      const updateId = updateIds[0];
      if (updateId === undefined) return undefined;
      const polled = await fixture.client.workflowService.pollWorkflowExecutionUpdate({
        namespace: fixture.env.namespace,
        updateRef: { workflowExecution: { workflowId: id }, updateId },
        waitPolicy: { lifecycleStage: ADMITTED },
        identity: 'adv5',
      });
      return polled.stage ? true : undefined;
    });

    const reset = await resetToFirstWorkflowTask(fixture.env, id, 'adv5: re-do the conversation');
    assert.equal(reset.code, 0, reset.stderr);
    const after = await handle.describe();
    assert.notEqual(after.runId, before.runId, 'the run was reset');
    const chainBefore = before.raw.workflowExecutionInfo?.firstRunId;
    const chainAfter = after.raw.workflowExecutionInfo?.firstRunId;
    console.log(`adv5 reset: chain ${chainBefore} -> ${chainAfter}; runs ${before.runId} -> ${after.runId}`);

    const outcome = await said;
    console.log(
      `adv5 reset: say outcome ${'receipt' in outcome ? JSON.stringify(outcome.receipt) : String(outcome.err)}`,
    );
    const result = await runResult(fixture.client.workflow.getHandle(id));
    const turns = (result.conversation?.turns ?? []).filter((t) => t.from === 'customer' && t.text === TEXT);
    console.log(`adv5 reset: result ${result.stop_reason}; the message is in the transcript ${turns.length} times`);
    assert.ok(!('err' in outcome), `the say failed: ${'err' in outcome ? String(outcome.err) : ''}`);
    assert.equal(turns.length, 1, 'the message is in the transcript once');
    assert.equal(result.stop_reason, 'success');
  });
});
