// An adversary's `say` payloads against a deployment that encrypts its payloads (worker and client
// hold the keys): an encrypted-looking payload that does not decrypt must be refused like any other
// bad message (docs/conversations.md "What say refuses"), not fail the run's workflow tasks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { agentFixture } from '../helpers/agent-fixture';
import { agentInput, eventually } from '../helpers/harness';
import { codecEnv, newKey } from '../helpers/codec';
import { temporalCli } from '../helpers/temporal-cli-run';
import { byStep, final, message } from '../../offline-model/scripted-replies';
import { runResult, runState } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';

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

// The same bytes as a Signal: a Signal cannot be refused (it is in the history once sent), so the
// run's own Signal reads its payload undecoded and drops what nothing can read, with one log line.
const SIGNALS: Array<[string, string[]]> = [
  ['random bytes under the deployment key id', ['encoding=binary/encrypted', 'encryption-key-id=k1']],
  ['random bytes under an unknown key id', ['encoding=binary/encrypted', 'encryption-key-id=nope']],
  ['an encoding no converter reads', ['encoding=bogus']],
];

test('llm_attempt_charged Signals nothing can read are dropped: no failed workflow task, the conversation goes on', async () => {
  const { id, handle } = await fixture.start(
    byStep({ 1: message('Hello, how can I help?'), 2: final('Goodbye.') }),
    agentInput({ goal: 'Help the customer.', conversation: { idle_timeout_seconds: 300 }, validator: 'off' }),
  );
  await eventually('the run waits for the customer', async () =>
    (await runState(handle)).phase === 'awaiting_customer' ? true : undefined,
  );
  for (const [what, meta] of SIGNALS) {
    const out = await temporalCli(fixture.env, [
      'workflow',
      'signal',
      '--workflow-id',
      id,
      '--name',
      'llm_attempt_charged',
      ...meta.flatMap((m) => ['--input-meta', m]),
      '--input-base64',
      '--input',
      randomBytes(64).toString('base64'),
    ]);
    assert.equal(out.code, 0, `${what}: the signal was sent (${out.stderr.trim().slice(0, 200)})`);
  }
  const history = async () => (await handle.fetchHistory()).events ?? [];
  // The say's workflow task reads the three Signals first: had one failed it, the say would not be accepted.
  await sayToRun(fixture.client, id, { text: 'Thanks, that is all.' });
  const result = await runResult(handle);
  const events = await history();
  assert.deepEqual(
    {
      signals: events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED).length,
      failedWorkflowTasks: events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED).length,
      answer: result.answer,
    },
    { signals: SIGNALS.length, failedWorkflowTasks: 0, answer: 'Goodbye.' },
  );
  // One line each in the worker's log (it reaches the process's output a moment later).
  const dropped = [
    /dropped an llm_attempt_charged signal: its payload cannot be decrypted \(payload was encrypted with key "nope"/,
    /dropped an llm_attempt_charged signal: its payload cannot be decrypted \(payload encrypted with key "k1" does not decrypt/,
    /dropped an llm_attempt_charged signal: its payload cannot be read \(Unknown encoding: bogus\)/,
  ];
  await eventually('the three drops in the worker log', () =>
    dropped.every((line) => line.test(fixture.worker.output())) ? true : undefined,
  ).catch(() => assert.fail(`not every drop is logged:\n${fixture.worker.output().slice(-2000)}`));
});
