// Effects exactly once, on the real server with real worker processes and a real SQLite refunds
// service: a worker killed after the commit, attempts that time out before and after the commit,
// the same workflow id started twice, and a duplicated approval. Each ends with exactly one row.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { ScriptedLlmServer } from '../scripts/scripted-llm-server';
import { runResult, startRun } from '../client/agent-client';
import { answerApproval, pendingApproval } from '../client/approvals';
import type { TemporalEnv } from '../runtime/temporal-env';
import { approvalUpdate } from '../common/approvals';
import type { PendingApproval } from '../common/approvals';
import type { AgentResult } from '../common/types';
import { agentInput, connectClient, eventually, startWorkerProcess, testEnv, uniqueId } from './helpers/harness';
import type { WorkerProcess } from './helpers/harness';
import { billingOf, finalAnswer, REFUND_ALLOW, refundFixture, refundGoal, refundOf } from './helpers/refund-fixtures';
import type { RefundFixture } from './helpers/refund-fixtures';

let llm: ScriptedLlmServer;
let client: Client;
let fx: RefundFixture;
let plainEnv: TemporalEnv; // no faults
let killEnv: TemporalEnv; // stalls after the commit; killed with SIGKILL
let afterCommitEnv: TemporalEnv; // stalls after the commit; times out
let beforeCommitEnv: TemporalEnv; // stalls after planning, before the commit; times out
const workers: WorkerProcess[] = [];
const STALL_MS = '60000'; // far longer than the 2 s heartbeat timeout: the attempt never reports in time

function worker(env: TemporalEnv, extra: Record<string, string> = {}): WorkerProcess {
  const w = startWorkerProcess(env, { OPENAI_BASE_URL: llm.baseUrl, ...fx.workerEnv, ...extra });
  workers.push(w);
  return w;
}

before(async () => {
  llm = await ScriptedLlmServer.start();
  fx = refundFixture();
  plainEnv = testEnv(uniqueId('refund-plain'));
  killEnv = testEnv(uniqueId('refund-kill'));
  afterCommitEnv = testEnv(uniqueId('refund-after'));
  beforeCommitEnv = testEnv(uniqueId('refund-before'));
  const started = [
    worker(plainEnv),
    worker(killEnv, { AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: STALL_MS }),
    worker(afterCommitEnv, { AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: STALL_MS }),
    worker(beforeCommitEnv, { AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS: STALL_MS }),
  ];
  await Promise.all(started.map((w) => w.ready));
  client = await connectClient(plainEnv);
});

after(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await client?.connection.close();
  await llm?.close();
  fx?.cleanup();
});

async function startRefundRun(env: TemporalEnv, id = uniqueId('refund'), user = fx.nextUser()) {
  llm.script(id, [billingOf(user), refundOf(user), finalAnswer()]);
  const input = agentInput({
    goal: refundGoal(user),
    user_id: user,
    allow: REFUND_ALLOW,
    budget: { max_seconds: 120 },
  });
  const handle = await startRun(client, env, input, id);
  return { id, user, handle, input };
}

function waitForPending(handle: WorkflowHandle): Promise<PendingApproval> {
  return eventually('a call awaiting approval', () => pendingApproval(handle));
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

describe('refunds: effects exactly once', () => {
  it('SIGKILL after the commit, before the report: the new worker finds the refund by key; one row; success', async () => {
    const killed = workers[1]!;
    const { id, user, handle } = await startRefundRun(killEnv);
    const pending = await waitForPending(handle);
    assert.deepEqual([pending.tool, pending.amount_usd, pending.args?.user_id], ['issue_refund', 49, user]);
    await answerApproval(client, id, { decision: 'approve' });

    // The refund is committed in the service; the activity (stalled) has not reported back.
    const committed = await eventually('the committed refund', () =>
      fx
        .service()
        .list({ workflow_id: id })
        .find((r) => r.state === 'confirmed'),
    );
    assert.equal((await handle.describe()).status.name, 'RUNNING');
    await killed.kill();
    const rescue = worker(killEnv);
    await rescue.ready;

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    const observation = refundObservation(result);
    assert.equal(observation.ok, true);
    assert.equal(observation.data.reconciled, true, 'the retry reconciled by key');
    assert.equal(observation.data.refund.refund_id, committed.id);
    assert.equal(fx.service().list({ user_id: user }).length, 1, 'exactly one refund row');
    assert.equal(fx.service().list({ user_id: user })[0]!.state, 'confirmed');

    const attempts = await refundAttempts(handle);
    assert.equal(attempts.scheduledCount, 1);
    assert.equal(attempts.started.at(-1)!.attempt, 2, 'the second attempt completed the activity');
    assert.ok(attempts.started.at(-1)!.lastFailure?.timeoutFailureInfo, 'after the dead worker timed out');
  });

  it('timeout after the commit: the retry reconciles instead of repeating; one row', async () => {
    const { id, user, handle } = await startRefundRun(afterCommitEnv);
    await waitForPending(handle);
    await answerApproval(client, id, { decision: 'approve' });
    const result = await runResult(handle);

    assert.equal(result.stop_reason, 'success');
    const observation = refundObservation(result);
    assert.equal(observation.data.reconciled, true);
    const rows = fx.service().list({ user_id: user });
    assert.equal(rows.length, 1);
    assert.deepEqual(
      [rows[0]!.state, rows[0]!.fence],
      ['confirmed', 1],
      'settled by the first attempt, never touched again',
    );
    const attempts = await refundAttempts(handle);
    assert.equal(attempts.started.at(-1)!.attempt, 2);
    assert.ok(attempts.started.at(-1)!.lastFailure?.timeoutFailureInfo, 'the first attempt timed out (heartbeat)');
  });

  it('timeout after planning, before the commit: the retry claims the planned record and commits it once', async () => {
    const { id, user, handle } = await startRefundRun(beforeCommitEnv);
    await waitForPending(handle);
    await answerApproval(client, id, { decision: 'approve' });
    const result = await runResult(handle);

    assert.equal(result.stop_reason, 'success');
    assert.equal(refundObservation(result).data.reconciled, true);
    const rows = fx.service().list({ user_id: user });
    assert.equal(rows.length, 1);
    // fence 2: the retry claimed the record, so the stalled first attempt can no longer settle it.
    assert.deepEqual([rows[0]!.state, rows[0]!.fence], ['confirmed', 2]);
    assert.equal((await refundAttempts(handle)).started.at(-1)!.attempt, 2);
  });

  it('the same workflow id started twice does not double the effect', async () => {
    const { id, user, handle, input } = await startRefundRun(plainEnv);
    await waitForPending(handle);
    // While it runs, the id is taken.
    await assert.rejects(startRun(client, plainEnv, input, id), WorkflowExecutionAlreadyStartedError);
    await answerApproval(client, id, { decision: 'approve' });
    const first = await runResult(handle);
    assert.equal(first.stop_reason, 'success');
    assert.equal(refundObservation(first).data.reconciled, false);

    // Once it has ended, the id may be used again: same steps, same keys, the first outcome.
    llm.script(id, [billingOf(user), refundOf(user), finalAnswer()]);
    const again = await startRun(client, plainEnv, input, id);
    await waitForPending(again);
    await answerApproval(client, id, { decision: 'approve' });
    const second = await runResult(again);
    assert.equal(second.stop_reason, 'success');
    const observation = refundObservation(second);
    assert.equal(observation.data.reconciled, true);
    assert.equal(observation.data.refund.refund_id, refundObservation(first).data.refund.refund_id);
    assert.equal(fx.service().list({ user_id: user }).length, 1);
  });

  it('a duplicated approval is harmless: one activity, one row', async () => {
    const id = uniqueId('refund-dup');
    const user = fx.nextUser();
    // The model's last decision waits until the test has sent its duplicates, so the run is
    // still alive (and past the approval) when they arrive.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const replies = [billingOf(user), refundOf(user), finalAnswer()];
    llm.script(id, async (_req, i) => {
      if (i === 2) await released;
      return replies[i]!;
    });
    const handle = await startRun(
      client,
      plainEnv,
      agentInput({ goal: refundGoal(user), user_id: user, allow: REFUND_ALLOW }),
      id,
    );
    const pending = await waitForPending(handle);

    // Two operators approve at once (same update id: Temporal deduplicates) ...
    const receipts = await Promise.all([
      answerApproval(client, id, { decision: 'approve', id: pending.id }),
      answerApproval(client, id, { decision: 'approve', id: pending.id }),
    ]);
    assert.ok(receipts.every((r) => r.id === pending.id && r.decision === 'approve'));
    await llm.waitFor((r) => r.workflowId === id && llm.requests(id).length === 3, 20_000);
    // ... and a third answer with another update id reaches the workflow, which acknowledges it
    // as a duplicate and changes nothing.
    const late = await handle.executeUpdate(approvalUpdate, {
      args: [{ id: pending.id, decision: 'approve' }],
      updateId: uniqueId('late'),
    });
    assert.equal(late.duplicate, true);
    await assert.rejects(
      answerApproval(client, id, { decision: 'reject', id: pending.id }),
      /already answered: approve/,
    );
    release();

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    await assert.rejects(answerApproval(client, id, { decision: 'approve', id: pending.id }), /has ended/);
    assert.equal(fx.service().list({ user_id: user }).length, 1);
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
