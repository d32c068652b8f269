// Adversary: `temporal workflow reset` and read-only tools as local activities. A run reset to its
// first workflow task while a local read stalls (the AGENT_TOOL_PAUSE_MS drill) goes on in its new
// run: the read runs again there, the run succeeds, and the model's requests of the new run show
// what the old one's did (the view handoff serves the new run, never the old run's view).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { billing, final, profile } from '../../offline-model/scripted-replies';
import { runResult, runState } from '../../client/agent-client';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { eventually } from '../helpers/harness';
import { resetToFirstWorkflowTask } from '../helpers/temporal-cli-run';

const fixture = agentFixture({ queue: 'adv-local-reset', workerEnv: { AGENT_TOOL_PAUSE_MS: '4000' } });

describe('a reset in the middle of a local read', () => {
  it('the new run reads again and succeeds; its model requests match the old run’s', async () => {
    const { id, handle } = await fixture.start([
      profile(42),
      // the reset run's replies
      profile(42),
      billing(42),
      final('Done after the reset.'),
    ]);
    await eventually('the run to call its tool', async () =>
      (await runState(handle)).phase === 'calling_tool' ? true : undefined,
    );
    const reset = await resetToFirstWorkflowTask(fixture.env, id, 'adversary');
    assert.equal(reset.code, 0, reset.stderr);
    const result = await runResult(fixture.client.workflow.getHandle(id));
    assert.equal(result.stop_reason, 'success', JSON.stringify(result));
    assert.deepEqual(
      result.history.map((h) => (h.action.kind === 'tool' ? h.action.name : h.action.kind)),
      ['get_user_profile', 'get_user_billing'],
    );
    const requests = fixture.llm.requests(id);
    assert.equal(requests.length, 4, 'one request of the old run, three of the new');
    assert.deepEqual(requests[1]!.body.messages, requests[0]!.body.messages, 'the first decision, the same view');
    const profileResult = requests[2]!.body.messages.at(-1);
    assert.equal(profileResult.role, 'tool');
    assert.match(profileResult.content, /users-service/);
    const trace = await runCli(fixture.env, ['trace', id, '-o', 'jsonl']);
    assert.equal(trace.code, 0, trace.stderr);
    assert.match(trace.stdout, /get_user_billing/);
  });
});
