// Durability: a worker process killed with SIGKILL in the middle of an LLM decision. A new worker
// process finishes the same run, and the retried decision carries the same Idempotency-Key.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import { ScriptedLlmServer } from '../scripts/scripted-llm-server';
import { runResult, startRun } from '../client/agent-client';
import type { TemporalEnv } from '../runtime/temporal-env';
import { agentInput, connectClient, startWorkerProcess, testEnv, uniqueId } from './helpers/harness';
import type { WorkerProcess } from './helpers/harness';

let llm: ScriptedLlmServer;
let client: Client;
let env: TemporalEnv;
const workers: WorkerProcess[] = [];

before(async () => {
  llm = await ScriptedLlmServer.start();
  env = testEnv(uniqueId('crash'));
  client = await connectClient(env);
});

after(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await client?.connection.close();
  await llm?.close();
});

describe('worker crash', () => {
  it('SIGKILL during decide: a new worker finishes the run with the same Idempotency-Key', async () => {
    const first = startWorkerProcess(env, { OPENAI_BASE_URL: llm.baseUrl });
    workers.push(first);
    await first.ready;

    const id = uniqueId('crash');
    llm.script(id, [
      { action: { kind: 'tool', name: 'get_user_profile', args: { user_id: 42 } } },
      { hang: true }, // the worker dies while this request is open
      { action: { kind: 'tool', name: 'get_user_billing', args: { user_id: 42 } } },
      { action: { kind: 'final', answer: 'Refundable: USD 49.00.' } },
    ]);
    const handle = await startRun(client, env, agentInput({ budget: { max_seconds: 120 } }), id);
    const inFlight = await llm.waitFor((r) => r.workflowId === id && r.step === 2, 20_000);

    await first.kill();
    const killedAt = Date.now();
    await llm.waitForAbort((r) => r.id === inFlight.id, 5_000); // the dead process's socket closed

    const second = startWorkerProcess(env, { OPENAI_BASE_URL: llm.baseUrl });
    workers.push(second);
    await second.ready;

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(
      result.trace.map((t) => t.tool),
      ['get_user_profile', 'get_user_billing'],
    );

    const requests = llm.requests(id);
    const runId = handle.firstExecutionRunId;
    assert.deepEqual(
      requests.map((r) => r.idempotencyKey),
      [
        `${id}:${runId}:decide:1`,
        `${id}:${runId}:decide:2`,
        `${id}:${runId}:decide:2`, // the retry on the new worker: same step, same key
        `${id}:${runId}:decide:3`,
      ],
    );

    // The retried attempt came from the new worker, after the crash.
    assert.ok(requests[2]!.receivedAt > killedAt);
    const history = await handle.fetchHistory();
    const started = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes);
    assert.ok(
      started.some((e) => (e.activityTaskStartedEventAttributes!.attempt ?? 1) > 1),
      'decide was retried',
    );
  });
});
