// Read-only tools run as local activities (issue 32): the run's history records each read as a
// MarkerRecorded event in the workflow's own task, with the same idempotency key a normal activity
// would carry, while the effect (issue_refund) and a read that opted out (search_policy) stay normal activities. `agent trace` still lists
// every call with its arguments, and a cancel reaches a local read in flight (no heartbeat needed).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkflowHandle } from '@temporalio/client';
import { cancelRun, runResult, startRun } from '../../client/agent-client';
import { answerApproval, pendingApproval } from '../../client/approvals';
import type { StepEvent } from '../../client/history/trace';
import { digest } from '../../client/history/trace';
import { LOCAL_ACTIVITY_MARKER, LOCAL_CALL_FIELD } from '../../common/temporal/local-call';
import type { HistoryEvent } from '../../client/history/read-history';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { LOCAL_TOOLS_PATCH } from '../../workflows/agent/patches';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { billingOf, finalAnswer, refundInput, refundOf, tool } from '../helpers/refund-fixtures';
import { payloadDecoder } from '../../client/history/fetch-chain';
import type { WorkerProcess } from '../../local-servers/worker-process';

const PAUSE_MS = 60_000;
let slowEnv: TemporalEnv; // a worker whose reads pause PAUSE_MS on their first attempt
let slowWorker: WorkerProcess;

const fixture = agentFixture({
  queue: 'local-tools',
  refunds: true,
  setup: async () => {
    slowEnv = fixture.queue('local-tools-slow');
    slowWorker = fixture.startWorker(
      { AGENT_TOOL_PAUSE_MS: String(PAUSE_MS), AGENT_TOOL_PAUSE_TOOLS: 'get_user_billing' },
      slowEnv,
    );
    await slowWorker.ready;
  },
});

interface LocalCall {
  type: string;
  result: Record<string, unknown> | undefined;
}

/** The local activities a history records: their type (from the SDK's marker data) and decoded result. */
async function localCalls(events: HistoryEvent[]): Promise<LocalCall[]> {
  const decode = payloadDecoder(fixture.client);
  const calls: LocalCall[] = [];
  for (const e of events) {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== LOCAL_ACTIVITY_MARKER) continue;
    const data = JSON.parse(Buffer.from(marker.details!.data!.payloads![0]!.data!).toString('utf8')) as Record<
      string,
      unknown
    >;
    const type = String(data.activity_type ?? data.activityType);
    calls.push({ type, result: (await decode(marker.details?.result?.payloads)) as Record<string, unknown> });
  }
  return calls;
}

const scheduledTypes = (events: HistoryEvent[]) =>
  events.flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });

/** The patch ids the run's history records (core's patch markers). */
function patchIds(events: HistoryEvent[]): string[] {
  return events.flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    const data = marker.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id] : [];
  });
}

async function traceOf(id: string): Promise<StepEvent[]> {
  const { code, stdout, stderr } = await runCli(fixture.env, ['trace', id, '--jsonl']);
  assert.equal(code, 0, stderr);
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as StepEvent);
}

describe('read-only tools as local activities', () => {
  it('reads are local activity markers under their keys, the effect a normal activity; agent trace lists every call', async () => {
    const user = fixture.refunds.nextUser();
    const id = uniqueId('local-tools');
    fixture.llm.script(id, [
      billingOf(user),
      tool('get_user_profile', { user_id: user }),
      tool('search_policy', { query: 'refund policy' }),
      refundOf(user),
      finalAnswer(),
    ]);
    const handle = await startRun(fixture.client, fixture.env, agentInput(refundInput(user)), id);
    await eventually('the refund awaiting approval', () => pendingApproval(handle));
    await answerApproval(fixture.client, id, { decision: 'approve' });
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(
      result.trace.map((t) => [t.step, t.tool, t.ok]),
      [
        [1, 'get_user_billing', true],
        [2, 'get_user_profile', true],
        [3, 'search_policy', true],
        [4, 'issue_refund', true],
      ],
    );

    const events = (await handle.fetchHistory()).events ?? [];
    assert.ok(patchIds(events).includes(LOCAL_TOOLS_PATCH), `patches: ${patchIds(events).join(', ')}`);
    const locals = await localCalls(events);
    assert.deepEqual(
      locals.map((c) => c.type),
      ['get_user_billing', 'get_user_profile'],
    );
    // The effect, and the read that opted out (localActivity: false), are normal activities.
    const scheduled = scheduledTypes(events);
    assert.deepEqual(
      scheduled.filter((t) => t !== 'decide'),
      ['search_policy', 'issue_refund'],
    );

    // Each read carried the key a normal activity would: <workflow id>:<step>:<tool>:<args hash>.
    for (const [i, call] of locals.entries()) {
      const echo = call.result?.[LOCAL_CALL_FIELD] as { idempotency_key: string; trace: { step: number } };
      const entry = result.trace[i]!;
      assert.equal(echo.trace.step, entry.step);
      assert.match(echo.idempotency_key, new RegExp(`^${id}:${entry.step}:${entry.tool}:[0-9a-f]+$`));
      assert.ok(echo.idempotency_key.includes(entry.args_hash), `${echo.idempotency_key} names ${entry.args_hash}`);
    }
    // The echo stays in the history's marker: the model's view and the result never see it.
    for (const h of result.history) assert.ok(!(LOCAL_CALL_FIELD in (h.observation as object)));

    const steps = await traceOf(id);
    const tools = steps.filter((s) => s.tool !== undefined && s.tool !== 'final');
    assert.deepEqual(
      tools.map((s) => [s.step, s.tool, s.observation?.status]),
      [
        [1, 'get_user_billing', 'ok'],
        [2, 'get_user_profile', 'ok'],
        [3, 'search_policy', 'ok'],
        [4, 'issue_refund', 'ok'],
      ],
    );
    assert.equal(tools[0]!.argumentDigest, digest({ user_id: user }));
    assert.equal(tools[1]!.argumentDigest, digest({ user_id: user }));
    assert.equal(tools[2]!.argumentDigest, digest({ query: 'refund policy' }));
  });

  it('a cancel reaches a local read in flight at once, without heartbeats', async () => {
    const user = fixture.refunds.nextUser();
    const id = uniqueId('local-cancel');
    fixture.llm.script(id, [billingOf(user), finalAnswer()]);
    const input = agentInput(refundInput(user, { budget: { max_seconds: 300 } }));
    const handle: WorkflowHandle = await startRun(fixture.client, slowEnv, input, id);
    // The read is under way once the worker says its first attempt pauses.
    await eventually('the read pausing on the slow worker', () =>
      slowWorker.output().includes(`${id}:1:get_user_billing:`) ? true : undefined,
    );
    const cancelledAt = Date.now();
    await cancelRun(fixture.client, id, 'local-tools test: cancel during a local read');
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'cancelled');
    assert.ok(Date.now() - cancelledAt < PAUSE_MS / 4, `closed ${Date.now() - cancelledAt} ms after the cancel`);
    const events = (await handle.fetchHistory()).events ?? [];
    assert.ok(!scheduledTypes(events).includes('get_user_billing'), 'the read was a local activity');
  });
});
