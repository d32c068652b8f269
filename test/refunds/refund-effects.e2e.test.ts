// Effects exactly once, on the real server with real worker processes and a real SQLite refunds
// service: a worker killed after the commit, attempts that time out before and after the commit,
// the same workflow id started twice, and a duplicated approval. Each ends with exactly one row.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { runResult, startRun } from '../../client/agent-client';
import { answerApproval, pendingApproval } from '../../client/approvals';
import type { TemporalEnv } from '../../runtime/temporal-env';
import type { PendingApproval } from '../../common/conversation/approvals';
import type { AgentResult } from '../../common/types';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { billingOf, finalAnswer, refundInput, refundOf } from '../helpers/refund-fixtures';
import { approvalUpdate } from '../../common/agent-messages';

// The fixture's worker has no faults; setup starts one per fault on queues of their own.
const fixture = agentFixture({
  queue: 'refund-plain',
  refunds: true,
  setup: async () => {
    killEnv = fixture.queue('refund-kill');
    afterCommitEnv = fixture.queue('refund-after');
    beforeCommitEnv = fixture.queue('refund-before');
    killWorker = fixture.startWorker({ AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: STALL_MS }, killEnv);
    const started = [
      killWorker,
      fixture.startWorker({ AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: STALL_MS }, afterCommitEnv),
      fixture.startWorker({ AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS: STALL_MS }, beforeCommitEnv),
    ];
    await Promise.all(started.map((w) => w.ready));
  },
});
let killEnv: TemporalEnv; // stalls after the commit; killed with SIGKILL
let killWorker: WorkerProcess;
let afterCommitEnv: TemporalEnv; // stalls after the commit; times out
let beforeCommitEnv: TemporalEnv; // stalls after planning, before the commit; times out
const STALL_MS = '60000'; // far longer than the 2 s heartbeat timeout: the attempt never reports in time

async function startRefundRun(env: TemporalEnv, id = uniqueId('refund'), user = fixture.refunds.nextUser()) {
  fixture.llm.script(id, [billingOf(user), refundOf(user), finalAnswer()]);
  const input = agentInput(refundInput(user, { budget: { max_seconds: 120 } }));
  const handle = await startRun(fixture.client, env, input, id);
  return { id, user, handle, input };
}

function waitForPending(handle: WorkflowHandle): Promise<PendingApproval> {
  return eventually('a call awaiting approval', () => pendingApproval(handle));
}

/** A refund run on `env`, approved as soon as it asks, to its end. */
async function approvedRefundRun(env: TemporalEnv) {
  const run = await startRefundRun(env);
  await waitForPending(run.handle);
  await answerApproval(fixture.client, run.id, { decision: 'approve' });
  return { ...run, result: await runResult(run.handle) };
}

/** The user has exactly one refund record, in this state and fence. */
async function assertOneRecord(user: number, state: string, fence: number, message?: string): Promise<void> {
  const rows = await fixture.refunds.rows({ user_id: user });
  assert.equal(rows.length, 1);
  assert.deepEqual([rows[0]!.state, rows[0]!.fence], [state, fence], message);
}

function refundObservation(result: AgentResult) {
  const entry = result.history.find((h) => h.action.kind === 'tool' && h.action.name === 'issue_refund');
  assert.ok(entry, 'the run has an issue_refund observation');
  return entry.observation as {
    ok: boolean;
    source: string;
    data: { refund: { refund_id: number; state: string; amount_usd: number }; reconciled: boolean };
  };
}

/** ActivityTaskStarted events of issue_refund, with their attempt and the failure that preceded them. */
async function refundAttempts(handle: WorkflowHandle) {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = new Map<string, string>();
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(String(e.eventId), s.activityType?.name ?? '');
  }
  const started = events
    .filter((e) => e.activityTaskStartedEventAttributes)
    .map((e) => e.activityTaskStartedEventAttributes!)
    .filter((a) => scheduled.get(String(a.scheduledEventId)) === 'issue_refund');
  return {
    scheduledCount: [...scheduled.values()].filter((n) => n === 'issue_refund').length,
    started: started.map((a) => ({ attempt: a.attempt ?? 1, lastFailure: a.lastFailure })),
  };
}

/** Tries a fresh run on the kill queue at most this often for a commit made by a stalled first attempt. */
const STALLED_COMMIT_TRIES = 3;

/**
 * A refund run on the kill queue whose first attempt committed and stalls before it reports. On a
 * loaded machine the first attempt can be timed out before it commits (its heartbeats starved for
 * the 2 s heartbeat timeout while the worker opened the refunds database); the retry then commits
 * and reports at once, so that run proves exactly-once on another path (checked) but not this one:
 * try a fresh run.
 */
async function stalledAfterCommit(tries = STALLED_COMMIT_TRIES) {
  const { id, user, handle } = await startRefundRun(killEnv);
  const pending = await waitForPending(handle);
  assert.deepEqual([pending.tool, pending.amount_usd, pending.args?.user_id], ['issue_refund', 49, user]);
  await answerApproval(fixture.client, id, { decision: 'approve' });

  // The refund is committed in the service; the activity (stalled) has not reported back.
  const committed = await eventually('the committed refund', async () =>
    (await fixture.refunds.rows({ workflow_id: id })).find((r) => r.state === 'confirmed'),
  );
  const described = await handle.describe();
  const refund = described.raw.pendingActivities?.find((a) => a.activityType?.name === 'issue_refund');
  if (refund?.attempt === 1) {
    assert.equal(described.status.name, 'RUNNING');
    return { id, user, handle, committed };
  }
  const attempts = await refundAttempts(handle);
  const result = await runResult(handle);
  assert.equal(result.stop_reason, 'success', `the run whose retry committed: ${JSON.stringify(attempts)}`);
  await assertOneRecord(user, 'confirmed', committed.fence, 'one refund, by the retry that claimed it');
  if (tries > 1) return stalledAfterCommit(tries - 1);
  return assert.fail(
    `the first attempt never made the commit in ${STALLED_COMMIT_TRIES} runs: ${JSON.stringify(attempts)}`,
  );
}

describe('refunds: effects exactly once', () => {
  it('SIGKILL after the commit, before the report: the new worker finds the refund by key; one row; success', async () => {
    const killed = killWorker;
    const { user, handle, committed } = await stalledAfterCommit();
    await killed.kill();
    const rescue = fixture.startWorker({}, killEnv);
    await rescue.ready;

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    const observation = refundObservation(result);
    assert.equal(observation.ok, true);
    const attempts = await refundAttempts(handle);
    assert.equal(
      observation.data.reconciled,
      true,
      `the retry reconciled by key (attempts: ${JSON.stringify(attempts)}; observation: ${JSON.stringify(observation)})`,
    );
    assert.equal(observation.data.refund.refund_id, committed.id);
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 1, 'exactly one refund row');
    assert.equal((await fixture.refunds.rows({ user_id: user }))[0]!.state, 'confirmed');

    assert.equal(attempts.scheduledCount, 1);
    assert.equal(attempts.started.at(-1)!.attempt, 2, 'the second attempt completed the activity');
    assert.ok(attempts.started.at(-1)!.lastFailure?.timeoutFailureInfo, 'after the dead worker timed out');
  });

  it('timeout after the commit: the retry reconciles instead of repeating; one row', async () => {
    const { user, handle, result } = await approvedRefundRun(afterCommitEnv);

    assert.equal(result.stop_reason, 'success');
    const observation = refundObservation(result);
    assert.equal(observation.data.reconciled, true);
    await assertOneRecord(user, 'confirmed', 1, 'settled by the first attempt, never touched again');
    const attempts = await refundAttempts(handle);
    assert.equal(attempts.started.at(-1)!.attempt, 2);
    assert.ok(attempts.started.at(-1)!.lastFailure?.timeoutFailureInfo, 'the first attempt timed out (heartbeat)');
  });

  it('timeout after planning, before the commit: the retry claims the planned record and commits it once', async () => {
    const { user, handle, result } = await approvedRefundRun(beforeCommitEnv);

    assert.equal(result.stop_reason, 'success');
    assert.equal(refundObservation(result).data.reconciled, true);
    // fence 2: the retry claimed the record, so the stalled first attempt can no longer settle it.
    await assertOneRecord(user, 'confirmed', 2);
    assert.equal((await refundAttempts(handle)).started.at(-1)!.attempt, 2);
  });

  it('the same workflow id started twice does not double the effect', async () => {
    const { id, user, handle, input } = await startRefundRun(fixture.env);
    await waitForPending(handle);
    // While it runs, the id is taken.
    await assert.rejects(startRun(fixture.client, fixture.env, input, id), WorkflowExecutionAlreadyStartedError);
    await answerApproval(fixture.client, id, { decision: 'approve' });
    const first = await runResult(handle);
    assert.equal(first.stop_reason, 'success');
    assert.equal(refundObservation(first).data.reconciled, false);

    // Once it has ended, the id may be used again: same steps, same keys, the first outcome.
    fixture.llm.script(id, [billingOf(user), refundOf(user), finalAnswer()]);
    const again = await startRun(fixture.client, fixture.env, input, id);
    await waitForPending(again);
    await answerApproval(fixture.client, id, { decision: 'approve' });
    const second = await runResult(again);
    assert.equal(second.stop_reason, 'success');
    const observation = refundObservation(second);
    assert.equal(observation.data.reconciled, true);
    assert.equal(observation.data.refund.refund_id, refundObservation(first).data.refund.refund_id);
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 1);
  });

  it('a duplicated approval is harmless: one activity, one row', async () => {
    const id = uniqueId('refund-dup');
    const user = fixture.refunds.nextUser();
    // The model's last decision waits until the test has sent its duplicates, so the run is
    // still alive (and past the approval) when they arrive.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const replies = [billingOf(user), refundOf(user), finalAnswer()];
    fixture.llm.script(id, async (_req, i) => {
      if (i === 2) await released;
      return replies[i]!;
    });
    const handle = await startRun(fixture.client, fixture.env, agentInput(refundInput(user)), id);
    const pending = await waitForPending(handle);

    // Two operators approve at once (same update id: Temporal deduplicates) ...
    const receipts = await Promise.all([
      answerApproval(fixture.client, id, { decision: 'approve', id: pending.id }),
      answerApproval(fixture.client, id, { decision: 'approve', id: pending.id }),
    ]);
    assert.ok(receipts.every((r) => r.id === pending.id && r.decision === 'approve'));
    await fixture.llm.waitFor((r) => r.workflowId === id && fixture.llm.requests(id).length === 3, 20_000);
    // ... and a third answer with another update id reaches the workflow, which acknowledges it
    // as a duplicate and changes nothing.
    const late = await handle.executeUpdate(approvalUpdate, {
      args: [{ id: pending.id, decision: 'approve' }],
      updateId: uniqueId('late'),
    });
    assert.equal(late.duplicate, true);
    await assert.rejects(
      answerApproval(fixture.client, id, { decision: 'reject', id: pending.id }),
      /already answered: approve/,
    );
    release();

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    await assert.rejects(answerApproval(fixture.client, id, { decision: 'approve', id: pending.id }), /has ended/);
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 1);
    assert.equal((await refundAttempts(handle)).scheduledCount, 1);
    assert.deepEqual(
      result.trace.map((t) => [t.tool, t.approval]),
      [
        ['get_user_billing', undefined],
        ['issue_refund', 'approve'],
      ],
    );
  });
});
