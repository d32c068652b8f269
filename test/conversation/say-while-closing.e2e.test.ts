// A customer's message that arrives while the run is closing into its successor (it continues as
// new at every step). The server aborts the Update with RESOURCE_EXHAUSTED "workflow is closing"
// when the workflow task that was running as it arrived completes with continue-as-new. Promised
// (docs/conversations.md): `say` lands the message on the chain's next run at once, applied once.
// It used to take 37-41 s: the SDK's gRPC retries backed off on the run that had closed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowNotFoundError } from '@temporalio/client';
import { chainHandle, runResult, runState } from '../../client/agent-client';
import { sayUpdate } from '../../common/agent-messages';
import { sayToRun } from '../../client/conversation';
import { byStep, message, profile } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';

/** The profile read holds its workflow task this long: the message arrives in that window. */
const READ_PAUSE_MS = 2_000;
const fixture = agentFixture({
  queue: 'say-closing',
  workerEnv: { AGENT_TOOL_PAUSE_MS: String(READ_PAUSE_MS), AGENT_TOOL_PAUSE_TOOLS: 'get_user_profile' },
});

describe('say while the run continues as new', () => {
  it('a message sent during the workflow task that ends in continue-as-new lands on the next run at once', async () => {
    const { id, handle } = await fixture.start(
      byStep({ 1: message('Hello! How can I help?'), 2: profile(42) }, message('Noted.')),
      { conversation: {}, continue_as_new_every: 1, budget: { max_steps: 20, max_tool_calls: 5, max_seconds: 120 } },
    );
    await eventually('the greeting', async () =>
      (await runState(handle)).phase === 'awaiting_customer' ? true : undefined,
    );
    await sayToRun(fixture.client, id, { text: 'Please look me up, I am user 42.' });
    // The profile read is a local activity: its workflow task stays open for READ_PAUSE_MS, then
    // completes with continue-as-new (every step). A message admitted meanwhile is aborted as closing.
    await eventually('the profile read', async () =>
      (await runState(handle)).phase === 'calling_tool' ? true : undefined,
    );
    const closing = fixture.client.workflow.getHandle(id, (await handle.describe()).runId);
    const receipt = await sayToRun(fixture.client, id, { text: 'I am still here.' });
    const answeredAt = Date.now();
    assert.ok(receipt, 'the message was taken');
    const closed = await closing.describe();
    assert.equal(closed.status.name, 'CONTINUED_AS_NEW');
    // From the reading run's close to the answer: about 0.1 s now. The SDK's first retry alone comes
    // after 1.36-2 s; its backoff on the closed run took 37-41 s.
    const afterClose = answeredAt - closed.closeTime!.getTime();
    assert.ok(afterClose < 1_200, `say answered ${afterClose} ms after the run continued as new`);

    await sayToRun(fixture.client, id, { end: true });
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'customer_ended');
    const texts = result.conversation!.turns.filter((t) => t.from === 'customer' && t.text).map((t) => t.text);
    assert.deepEqual(texts, ['Please look me up, I am user 42.', 'I am still here.'], 'each message applied once');
  });

  it('a message for a conversation that ended never reaches the next one started under its id', async () => {
    const script = byStep({ 1: message('Hello! How can I help?') }, message('Noted.'));
    const first = await fixture.start(script, { conversation: {} });
    await eventually('the greeting', async () =>
      (await runState(first.handle)).phase === 'awaiting_customer' ? true : undefined,
    );
    const described = await first.handle.describe();
    await sayToRun(fixture.client, first.id, { end: true });
    assert.equal((await runResult(first.handle)).stop_reason, 'customer_ended');
    const second = await fixture.start(script, { conversation: {} }, { id: first.id });
    await eventually('the second greeting', async () =>
      (await runState(second.handle)).phase === 'awaiting_customer' ? true : undefined,
    );
    // What sayToRun sends on after reading the first conversation: addressed to its chain.
    await assert.rejects(
      chainHandle(fixture.client, described).executeUpdate(sayUpdate, { args: [{ text: 'for the first one' }] }),
      WorkflowNotFoundError,
    );
    assert.equal(
      (await runState(second.handle)).conversation!.customer_messages,
      0,
      'the second conversation got nothing',
    );
  });
});
