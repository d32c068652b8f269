// A worker that lacks the key of a payload already in a run's history (a key rotation rolled out to
// the clients before the workers) must not act on it: its workflow task fails, nothing it cannot
// read reaches the workflow, and a worker with the key then finishes the run. A new say under such
// a key is refused with a line that says why, and the run goes on (adv-say-encrypted: the same
// for a say nobody can decrypt).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { codecFromEnv } from '../../runtime/data-converter';
import { runResult, runState, startRun } from '../../client/agent-client';
import { SayError, sayToRun } from '../../client/conversation';
import type { reactAgent } from '../../workflows/agent/agent';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { byStep, final, message } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { agentInput, connectClient, eventually, uniqueId } from '../helpers/harness';
import { codecEnv, newKey, withoutCodec } from '../helpers/codec';
import { ATTEMPT_CHARGED_SIGNAL } from '../../common/agent-messages';

const { EventType } = temporal.api.enums.v1;
const K1 = newKey();
const K2 = newKey();
const ONLY_K1 = codecEnv({ k1: K1 }, 'k1');
/** Reads k2, still writes k1: the rotation's first stage on the workers. */
const BOTH_KEYS = codecEnv({ k1: K1, k2: K2 }, 'k1');
const NO_CODEC = { AGENT_CODEC_KEYS: '', AGENT_CODEC_KEY_FILE: '', AGENT_CODEC_ACTIVE_KEY_ID: '' };

// The rotated client writes under k2; the old one under k1.
const fixture = agentFixture({
  queue: 'codec-missing-key',
  worker: false,
  clientEnv: { ...withoutCodec(), ...codecEnv({ k1: K1, k2: K2 }, 'k2') },
});

async function worker(codec: Record<string, string>): Promise<WorkerProcess> {
  const w = fixture.startWorker({ ...NO_CODEC, ...codec });
  await w.ready;
  return w;
}

/** The first failed workflow task after `afterEventId`, once there is one. */
async function failedTaskAfter(handle: WorkflowHandle, afterEventId: number) {
  return eventually(
    'a failed workflow task',
    async () =>
      ((await handle.fetchHistory()).events ?? []).find(
        (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED && Number(e.eventId) > afterEventId,
      ),
    30_000,
  );
}

/** What failed the task: its failure message, decoded (encrypted workers encode failure messages). */
async function failureMessage(event: temporal.api.history.v1.IHistoryEvent): Promise<string> {
  const failure = event.workflowTaskFailedEventAttributes?.failure;
  const encoded = failure?.encodedAttributes;
  if (!encoded) return failure?.message ?? '';
  const codec = codecFromEnv(BOTH_KEYS)!;
  const [plain] = await codec.decode([encoded as Payload]);
  return String((defaultPayloadConverter.fromPayload(plain!) as { message?: unknown }).message);
}

const lastEventId = async (handle: WorkflowHandle) =>
  Number(((await handle.fetchHistory()).events ?? []).at(-1)?.eventId ?? 0);

async function awaitingCustomer(handle: WorkflowHandle, turns: number) {
  return eventually('the run waits for the customer', async () => {
    const state = await runState(handle);
    return state.phase === 'awaiting_customer' && (state.conversation?.turns.length ?? 0) >= turns ? state : undefined;
  });
}

describe('a worker without the key of a payload in the history', () => {
  it('a run started under a key the worker lacks: its task fails, the model is never asked; a worker with the key finishes it', async () => {
    const noK2 = await worker(ONLY_K1);
    const { id, handle } = await fixture.start([final('Done.')]);
    const failed = await failedTaskAfter(handle, 0);
    // The input's marker reaches no converter: the task fails before the workflow function runs.
    assert.match(await failureMessage(failed), /Unknown encoding: binary\/undecodable/);
    assert.equal(fixture.llm.requests(id).length, 0, 'the worker without k2 acted on the run');
    assert.match(noK2.output(), /cannot decode a payload: payload was encrypted with key "k2"/);
    await noK2.kill();

    const withK2 = await worker(BOTH_KEYS);
    try {
      assert.equal((await runResult(handle)).answer, 'Done.');
    } finally {
      await withK2.kill();
    }
  });

  it('a say accepted under k2, replayed by a worker without k2: its task fails, the message is not lost; a worker with the key finishes the run', async () => {
    let old: Client | undefined;
    const workers: WorkerProcess[] = [];
    try {
      workers.push(await worker(BOTH_KEYS));
      // The run's input and every result are under k1; only the customer's message is under k2.
      old = await connectClient(fixture.env, { ...withoutCodec(), ...ONLY_K1 });
      const id = uniqueId('codec-missing-key');
      fixture.llm.script(
        id,
        byStep({
          1: message('Hello, how can I help?'),
          2: (req) => message(`You said: ${JSON.stringify(req).includes('refund for order 7') ? 'refund' : '?'}`),
          3: final('Goodbye.'),
        }),
      );
      const handle = (await startRun(
        old,
        fixture.env,
        agentInput({ goal: 'Help the customer.', conversation: { idle_timeout_seconds: 300 }, validator: 'off' }),
        id,
      )) as WorkflowHandle<typeof reactAgent>;
      await awaitingCustomer(handle, 1);
      await sayToRun(fixture.client, id, { text: 'I want a refund for order 7' });
      await awaitingCustomer(handle, 3);
      const asked = fixture.llm.requests(id).length;

      await workers[0]!.kill();
      workers.push(await worker(ONLY_K1));
      const before = await lastEventId(handle);
      // Any new event gives the run a workflow task; the new worker must replay the k2 message first.
      await old.workflow.getHandle(id).signal(ATTEMPT_CHARGED_SIGNAL, {});
      const failed = await failedTaskAfter(handle, before);
      // The SDK would reject the replayed Update (its argument does not convert), but the history
      // says it was accepted: Temporal reports a nondeterminism error and fails the task.
      assert.match(await failureMessage(failed), /Nondeterminism error.*UpdateAccepted|binary\/undecodable/);
      assert.match(workers[1]!.output(), /cannot decode a payload: payload was encrypted with key "k2"/);
      assert.equal(fixture.llm.requests(id).length, asked, 'the worker without k2 asked the model');
      await workers[1]!.kill();

      workers.push(await worker(BOTH_KEYS));
      await awaitingCustomer(handle, 3);
      await sayToRun(old, id, { text: 'Thanks, bye.' });
      const result = await runResult(handle);
      assert.equal(result.answer, 'Goodbye.');
      const turns = result.conversation?.turns.map((t) => t.text) ?? [];
      assert.ok(turns.includes('I want a refund for order 7'), `the k2 message is in the transcript: ${turns}`);
      assert.ok(turns.includes('You said: refund'), `the model saw the k2 message: ${turns}`);
    } finally {
      for (const w of workers) await w.kill();
      await old?.connection.close();
    }
  });

  it('a say under a key the worker lacks, to a run it serves: refused in one line that says why, the run goes on', async () => {
    let old: Client | undefined;
    const noK2 = await worker(ONLY_K1);
    try {
      old = await connectClient(fixture.env, { ...withoutCodec(), ...ONLY_K1 });
      const id = uniqueId('codec-missing-key');
      fixture.llm.script(id, byStep({ 1: message('Hello, how can I help?'), 2: final('Goodbye.') }));
      const handle = (await startRun(
        old,
        fixture.env,
        agentInput({ goal: 'Help the customer.', conversation: { idle_timeout_seconds: 300 }, validator: 'off' }),
        id,
      )) as WorkflowHandle<typeof reactAgent>;
      await awaitingCustomer(handle, 1);
      await assert.rejects(
        sayToRun(fixture.client, id, { text: 'under k2' }),
        (err: Error) =>
          err instanceof SayError &&
          /refused the message: the worker cannot decrypt it: it lacks the key this client encrypts with/.test(
            err.message,
          ) &&
          !err.message.includes('\n'),
      );
      await sayToRun(old, id, { text: 'under k1' });
      const result = await runResult(handle);
      assert.equal(result.answer, 'Goodbye.');
      assert.deepEqual(
        result.conversation?.turns.filter((t) => t.from === 'customer').map((t) => t.text),
        ['under k1'],
      );
      const failed = ((await handle.fetchHistory()).events ?? []).filter(
        (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
      );
      assert.equal(failed.length, 0);
    } finally {
      await noK2.kill();
      await old?.connection.close();
    }
  });
});
