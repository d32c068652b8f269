// Adversary (docs/conversations.md, "A message sent as the run continues as new": `agent extend`,
// like `say`, addresses the chain; the closing run's "workflow is closing" is retried within tens
// of milliseconds, so the next run takes it about 0.1 s after the closing run ends; once).
// `agent extend` (a real CLI process) sent during a conversation's workflow task that ends in
// continue-as-new, held open by a slow local read after the customer's message.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { byStep, message, profile } from '../../offline-model/scripted-replies';
import { runResult, runState } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import { eventually } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

const fixture = agentFixture({
  queue: 'adv5-extend-closing',
  workerEnv: { AGENT_TOOL_PAUSE_MS: '4000', AGENT_TOOL_PAUSE_TOOLS: 'get_user_profile' },
});

describe('adv5: agent extend while a conversation continues as new in a slow task', () => {
  it('granted once, answered within 1.2 s of the closing run’s end', async () => {
    const { id, handle } = await fixture.start(
      byStep({ 1: message('Hello! How can I help?'), 2: profile(42) }, message('Noted.')),
      { conversation: {}, continue_as_new_every: 1, budget: { max_steps: 20, max_tool_calls: 5, max_seconds: 120 } },
    );
    await eventually('the greeting', async () =>
      (await runState(handle)).phase === 'awaiting_customer' ? true : undefined,
    );
    await sayToRun(fixture.client, id, { text: 'Please look me up, I am user 42.' });
    await eventually('the profile read', async () =>
      (await runState(handle)).phase === 'calling_tool' ? true : undefined,
    );
    const closing = fixture.client.workflow.getHandle(id, (await handle.describe()).runId);
    const out = await runCli(fixture.env, ['extend', id, '--steps', '3', '--reason', 'adv5 top-up while closing']);
    const answeredAt = Date.now();
    const closed = await closing.describe();
    const afterClose = closed.closeTime ? answeredAt - closed.closeTime.getTime() : undefined;
    console.log(
      `adv5 extend-closing: exit ${out.code}: ${JSON.stringify((out.stdout || out.stderr).trim())}; reading run ${closed.status.name}; answered ${afterClose} ms after it closed`,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /top-up 1\)/);
    if (afterClose !== undefined) assert.ok(afterClose < 1_200, `answered ${afterClose} ms after the run closed`);

    await sayToRun(fixture.client, id, { end: true });
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'customer_ended');
    assert.equal(result.extensions?.length, 1, 'granted once');
  });
});
