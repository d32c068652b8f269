// The worker runs the workflow bundle `npm run build` made (worker/workflow-bundle.ts) instead of
// bundling at start: a fresh worker takes over a crashed one's run with it, and a worker with a
// codec key runs the bundle whose failure converter encodes the failures the workflow raises.
// How fast a worker starts is measured by the benchmark (docs/benchmark.md), not asserted here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { temporal } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import { billing, final, profile } from '../../offline-model/scripted-replies';
import { runResult, startRun } from '../../client/agent-client';
import { WORKFLOW_TYPE } from '../../client/run-id';
import { EncryptionCodec } from '../../runtime/codec/encryption-codec';
import { keyringFromEnv } from '../../runtime/codec/keyring';
import { agentInput, connectClient, uniqueId } from '../helpers/harness';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { agentFixture } from '../helpers/agent-fixture';
import { codecEnv, newKey, withoutCodec } from '../helpers/codec';

const fixture = agentFixture({ queue: 'bundle', worker: false });

const PLAIN_LINE = 'worker: workflow code from the prebuilt bundle dist/workflow-bundle.js';
const ENCODED_LINE = 'worker: workflow code from the prebuilt bundle dist/workflow-bundle.encoded-failures.js';
const NOT_BUILT = 'the worker did not load the prebuilt bundle: build with `npm run build` (tsc alone leaves it stale)';

async function started(worker: WorkerProcess): Promise<WorkerProcess> {
  await worker.ready;
  return worker;
}

describe('prebuilt workflow bundle', () => {
  it('a fresh worker, loading the prebuilt bundle, picks up the run of a crashed one', async () => {
    const first = await started(fixture.startWorker());
    assert.ok(first.output().includes(PLAIN_LINE), `${NOT_BUILT}\n${first.output()}`);

    const id = uniqueId('bundle-crash');
    fixture.llm.script(id, [profile(), { hang: true }, billing(), final('Refundable: USD 49.00.')]);
    const handle = await startRun(fixture.client, fixture.env, agentInput({ budget: { max_seconds: 120 } }), id);
    await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 2, 20_000);
    await first.kill();

    const fresh = await started(fixture.startWorker());
    assert.ok(fresh.output().includes(PLAIN_LINE), `${NOT_BUILT}\n${fresh.output()}`);
    assert.doesNotMatch(fresh.output(), /bundling the workflow code at start/);

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    // The fresh worker ran the run's workflow tasks after the crash (its identity is in the history).
    const history = await handle.fetchHistory();
    const byFresh = (history.events ?? []).filter(
      (e) => e.workflowTaskStartedEventAttributes?.identity === fresh.identity,
    );
    assert.ok(byFresh.length > 0, 'no workflow task was started by the fresh worker');
  });

  it("with a codec key the worker runs the encoding bundle: a failure the workflow raises is encrypted, a plain worker's is not", async () => {
    const codec = codecEnv({ k1: newKey() }, 'k1');
    const encryptedQueue = fixture.queue('bundle-enc');
    const plainQueue = fixture.queue('bundle-plain');
    const encrypted = await started(fixture.startWorker(codec, encryptedQueue));
    assert.ok(encrypted.output().includes(ENCODED_LINE), `${NOT_BUILT}\n${encrypted.output()}`);
    await started(fixture.startWorker({}, plainQueue));

    // `carried` from a client is refused by the workflow itself (an ApplicationFailure it throws).
    const refused = async (env: typeof plainQueue, clientEnv: NodeJS.ProcessEnv) => {
      const client = await connectClient(env, clientEnv);
      const handle = await client.workflow.start(WORKFLOW_TYPE, {
        taskQueue: env.taskQueue,
        workflowId: uniqueId('bundle-refused'),
        args: [{ ...agentInput(), carried: {} }],
      });
      await assert.rejects(handle.result());
      const events = (await handle.fetchHistory()).events ?? [];
      const failed = events.find((e) => e.workflowExecutionFailedEventAttributes);
      return failed!.workflowExecutionFailedEventAttributes!.failure!;
    };

    const plain = await refused(plainQueue, withoutCodec());
    assert.match(plain.message ?? '', /carried/);

    const hidden = await refused(encryptedQueue, { ...withoutCodec(), ...codec });
    assert.equal(hidden.message, 'Encoded failure');
    assert.ok(hidden.encodedAttributes, 'the failure has encoded attributes');
    const [decoded] = await new EncryptionCodec(keyringFromEnv(codec)!).decode([
      hidden.encodedAttributes as temporal.api.common.v1.IPayload,
    ]);
    assert.match(String(defaultPayloadConverter.fromPayload<{ message: string }>(decoded!).message), /carried/);
  });
});
