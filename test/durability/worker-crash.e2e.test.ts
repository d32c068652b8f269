// Durability: a worker process killed with SIGKILL in the middle of an LLM decision. A new worker
// process finishes the same run, and the retried decision carries the same Idempotency-Key.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { billing, final, profile } from '../../offline-model/scripted-replies';
import { runResult, startRun } from '../../client/agent-client';
import { agentInput, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';

const fixture = agentFixture({ queue: 'crash', worker: false });

describe('worker crash', () => {
  it('SIGKILL during decide: a new worker finishes the run with the same Idempotency-Key', async () => {
    const first = fixture.startWorker();
    await first.ready;

    const id = uniqueId('crash');
    fixture.llm.script(id, [
      profile(),
      { hang: true }, // the worker dies while this request is open
      billing(),
      final('Refundable: USD 49.00.'),
    ]);
    const handle = await startRun(fixture.client, fixture.env, agentInput({ budget: { max_seconds: 120 } }), id);
    const inFlight = await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 2, 20_000);

    await first.kill();
    const killedAt = Date.now();
    await fixture.llm.waitForAbort((r) => r.id === inFlight.id, 5_000); // the dead process's socket closed

    const second = fixture.startWorker();
    await second.ready;

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(
      result.trace.map((t) => t.tool),
      ['get_user_profile', 'get_user_billing'],
    );

    const requests = fixture.llm.requests(id);
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
