// Durability of a read-only tool run as a local activity: the worker running it is killed with
// SIGKILL mid-call. Nothing of the call is in the history yet (a local activity is recorded only
// when it ends, with its workflow task), so the task times out and a new worker process runs the
// read again, under the same idempotency key, and finishes the run.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { billing, final } from '../../offline-model/scripted-replies';
import { runResult, startRun } from '../../client/agent-client';
import { payloadDecoder } from '../../client/history/fetch-chain';
import { LOCAL_ACTIVITY_MARKER, localCallOf } from '../../common/temporal/local-call';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';

const fixture = agentFixture({ queue: 'local-crash', worker: false });

describe('worker crash during a local tool call', () => {
  it('SIGKILL during a local read: a new worker runs it again under the same key and finishes the run', async () => {
    // The first worker's read pauses (as a slow backend would) long enough to be killed in it.
    const first = fixture.startWorker({ AGENT_TOOL_PAUSE_MS: '60000', AGENT_TOOL_PAUSE_TOOLS: 'get_user_billing' });
    await first.ready;

    const id = uniqueId('local-crash');
    fixture.llm.script(id, [billing(), final('Refundable: USD 49.00.')]);
    const handle = await startRun(fixture.client, fixture.env, agentInput({ budget: { max_seconds: 120 } }), id);
    // The worker's log names the call in flight and its key.
    const keyInFlight = await eventually(
      'the local read under way on the first worker',
      () => new RegExp(`${id}:1:get_user_billing:[0-9a-f]+`).exec(first.output())?.[0],
    );
    assert.match(first.output(), /tool pause: get_user_billing .*isLocal=true/);
    await first.kill();

    const second = fixture.startWorker();
    await second.ready;
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(
      result.trace.map((t) => [t.tool, t.ok]),
      [['get_user_billing', true]],
    );

    // The read is recorded once, by the second worker, under the key the first one used.
    const events = (await handle.fetchHistory()).events ?? [];
    const markers = events.filter((e) => e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER);
    assert.equal(markers.length, 1);
    const marker = markers[0]!.markerRecordedEventAttributes!;
    const echo = localCallOf(await payloadDecoder(fixture.client)(marker.details?.result?.payloads));
    assert.equal(echo?.idempotency_key, keyInFlight);
    const task = events.find((e) => e.eventId?.toString() === marker.workflowTaskCompletedEventId?.toString());
    assert.equal(task?.workflowTaskCompletedEventAttributes?.identity, second.identity);
    // The first worker's workflow task, the one that ran the read, timed out.
    assert.ok(
      events.some((e) => e.workflowTaskTimedOutEventAttributes),
      'the killed worker’s workflow task timed out',
    );
  });
});
