// An adversary's `say` payloads against a deployment that encrypts its payloads (worker and client
// hold the keys): an encrypted-looking payload that does not decrypt must be refused like any other
// bad message (docs/conversations.md "What say refuses"), not fail the run's workflow tasks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { agentFixture } from './helpers/agent-fixture';
import { agentInput, eventually } from './helpers/harness';
import { codecEnv, newKey } from './helpers/codec';
import { temporalCli } from './helpers/temporal-cli-run';
import { byStep, final, message } from '../testing/scripted-replies';
import { runState } from '../client/agent-client';

const keys = codecEnv({ k1: newKey() }, 'k1');
const fixture = agentFixture({ queue: 'adv-say-enc', workerEnv: keys, clientEnv: { ...process.env, ...keys } });

const { EventType } = temporal.api.enums.v1;

const JUNK: Array<[string, string]> = [
  ['the deployment key id', 'k1'],
  ['an unknown key id', 'nope'],
];

for (const [what, keyId] of JUNK) {
  test(`random bytes as an encrypted say under ${what}: refused, the conversation goes on`, async () => {
    const { id, handle } = await fixture.start(
      byStep({ 1: message('Hello, how can I help?'), 2: final('Goodbye.') }),
      agentInput({ goal: 'Help the customer.', conversation: { idle_timeout_seconds: 300 }, validator: 'off' }),
    );
    await eventually('the run waits for the customer', async () =>
      (await runState(handle)).phase === 'awaiting_customer' ? true : undefined,
    );
    const out = await temporalCli(fixture.env, [
      'workflow',
      'update',
      'execute',
      '--workflow-id',
      id,
      '--name',
      'say',
      '--input-meta',
      'encoding=binary/encrypted',
      '--input-meta',
      `encryption-key-id=${keyId}`,
      '--input-base64',
      '--input',
      randomBytes(64).toString('base64'),
    ]);
    const failed = ((await handle.fetchHistory()).events ?? []).filter(
      (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
    );
    const answers = await eventually('the state query', () => runState(handle).then(() => 'yes'), 60_000).catch(
      (err: Error) => `no (${err.message.slice(0, 120)})`,
    );
    await handle.terminate('adversary probe over').catch(() => undefined);
    assert.deepEqual(
      { accepted: out.code === 0, failedWorkflowTasks: failed.length, stateQueryAnswers: answers },
      { accepted: false, failedWorkflowTasks: 0, stateQueryAnswers: 'yes' },
      `CLI stderr: ${out.stderr.trim().slice(0, 300)}; failure: ${failed[0]?.workflowTaskFailedEventAttributes?.failure?.message ?? ''}`,
    );
  });
}
