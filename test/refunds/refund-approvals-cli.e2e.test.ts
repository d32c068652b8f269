// Approvals end to end through the CLI (`node dist/cli/cli.js`) against the real server and a
// real worker process: approve, reject, approval timeout, an escalation answered by a person,
// cancelling a run that waits, and bad input that changes nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { existingRun } from '../../client/agent-client';
import { pendingApproval } from '../../client/approvals';
import { runCli } from '../helpers/cli';
import type { PendingApproval } from '../../common/conversation/approvals';
import type { AgentResult } from '../../common/types';
import { DIST, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { billingOf, finalAnswer, refundOf, refundRunArgs } from '../helpers/refund-fixtures';
import { requestView } from '../../offline-model/request-view';

const exec = promisify(execFile);

const fixture = agentFixture({ queue: 'approvals', refunds: true });

function cli(args: string[]) {
  return exec(process.execPath, [path.join(DIST, 'cli', 'cli.js'), ...args], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: fixture.env.address,
      TEMPORAL_NAMESPACE: fixture.env.namespace,
      TEMPORAL_TASK_QUEUE: fixture.env.taskQueue,
      AGENT_OPERATOR: 'test-operator',
    },
  });
}

/** The CLI fails with exit `code` and exactly one line on stderr matching `pattern`. */
async function cliFails(args: string[], pattern: RegExp, code = 1): Promise<void> {
  await assert.rejects(cli(args), (err: { code?: number; stderr?: string }) => {
    assert.equal(err.code, code, `exit code of agent ${args.join(' ')}: ${err.stderr}`);
    const stderr = (err.stderr ?? '').trim();
    assert.equal(stderr.split('\n').length, 1, `one line on stderr, got: ${stderr}`);
    assert.match(stderr, pattern);
    return true;
  });
}

/** Starts a run through the CLI; the model is scripted. */
async function cliRun(
  user: number,
  replies: Reply[] | ((i: number) => Reply | Promise<Reply>),
  extra: string[] = [],
  maxSeconds = 120,
): Promise<string> {
  const id = uniqueId('appr');
  fixture.llm.script(id, Array.isArray(replies) ? replies : (_req, i) => replies(i));
  const { stdout } = await cli([...refundRunArgs(user, id, maxSeconds), ...extra]);
  assert.match(stdout, new RegExp(`started ${id}`));
  return id;
}

async function waitForPending(id: string): Promise<PendingApproval> {
  const handle = await existingRun(fixture.client, id);
  return eventually('a call awaiting approval', () => pendingApproval(handle));
}

/** The exit code of `agent result` for these runs: 0 a final answer, 5 cancelled, 4 stopped (denied, timed out). */
const exitCodeFor = (stopReason: string) => (stopReason === 'success' ? 0 : stopReason === 'cancelled' ? 5 : 4);

/** The result through `agent result -o json`, whose exit code says how the run ended. */
async function cliResult(id: string): Promise<AgentResult> {
  const r = await runCli(fixture.env, ['result', id, '-o', 'json']);
  const result = JSON.parse(r.stdout) as AgentResult;
  assert.equal(r.code, exitCodeFor(result.stop_reason), `exit code of result ${id}: ${r.stderr}`);
  return result;
}

/** What the model was shown last (the payload of its latest decide request). */
function lastObservation(id: string) {
  const requests = fixture.llm.requests(id);
  const payload = requestView(requests.at(-1)!.body)!;
  return (payload.untrusted_observations.steps.at(-1)?.observation ?? null) as {
    data: { refund: { state: string } };
  } | null;
}

async function updateEvents(id: string): Promise<number> {
  const history = await (await existingRun(fixture.client, id)).fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
}

describe('approvals through the CLI', () => {
  it('approve: status shows the exact call; `agent approve` lets it run; the refund is confirmed once', async () => {
    const user = fixture.refunds.nextUser();
    const id = await cliRun(user, [billingOf(user), refundOf(user, 49), finalAnswer()]);
    const pending = await waitForPending(id);

    const { stdout: status } = await cli(['status', id]);
    assert.match(status, /phase:\s+awaiting_approval/);
    assert.deepEqual(pending.args, {
      user_id: user,
      amount_usd: 49,
      reason: 'pro_monthly paid 10 days ago, within the 14-day window',
    });
    const shown = `issue_refund ${JSON.stringify(pending.args)} for USD 49.00`;
    assert.ok(status.includes(`awaiting:     approval of step 2: ${shown}`), status);
    assert.match(status, new RegExp(`call id:\\s+${pending.id}`));
    const statusJson = JSON.parse((await cli(['status', id, '-o', 'json'])).stdout);
    assert.equal(statusJson.state.awaiting_approval.id, pending.id);
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 0, 'nothing is written before the approval');

    const { stdout } = await cli(['approve', id]);
    assert.equal(stdout.trim(), `approved ${pending.id} in ${id}: ${shown}`);

    const result = await cliResult(id);
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(
      result.trace.map((t) => [t.tool, t.ok, t.approval]),
      [
        ['get_user_billing', true, undefined],
        ['issue_refund', true, 'approve'],
      ],
    );
    assert.equal(lastObservation(id)!.data.refund.state, 'confirmed');
    const rows = await fixture.refunds.rows({ user_id: user });
    assert.deepEqual(
      rows.map((r) => [r.state, r.amount_usd, r.workflow_id]),
      [['confirmed', 49, id]],
    );

    // Approving again, now that the run has ended, is refused and changes nothing.
    await cliFails(['approve', id, '--call', pending.id], /has ended \(COMPLETED\)/);
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 1);
  });

  it('reject: the model sees the rejection and its reason as an observation; nothing is written', async () => {
    const user = fixture.refunds.nextUser();
    const id = await cliRun(user, [
      billingOf(user),
      refundOf(user, 49),
      finalAnswer('The refund was declined by support.'),
    ]);
    const pending = await waitForPending(id);

    const { stdout } = await cli([
      'reject',
      id,
      '--reason',
      'duplicate request, already handled by phone',
      '--call',
      pending.id,
    ]);
    assert.match(stdout, new RegExp(`^rejected ${pending.id} in ${id}: issue_refund`));

    const result = await cliResult(id);
    assert.equal(result.status, 'ok');
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(lastObservation(id), {
      tool: 'issue_refund',
      ok: false,
      data: { rejected: 'duplicate request, already handled by phone' },
      source: 'operator',
      trust: 'untrusted',
      bytes: 58,
      truncated: false,
    });
    assert.deepEqual(
      result.trace.map((t) => [t.tool, t.ok, t.approval]),
      [
        ['get_user_billing', true, undefined],
        ['issue_refund', false, 'reject'],
      ],
    );
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 0);
    const { stdout: shown } = await cli(['result', id]);
    assert.match(shown, /issue_refund \(\w+\) rejected by operator/);
  });

  it('approval timeout: nobody answers; the run ends approval_timeout; nothing is written', async () => {
    const user = fixture.refunds.nextUser();
    const id = await cliRun(user, [billingOf(user), refundOf(user, 49), finalAnswer()], ['--approval-timeout', '2']);
    const pending = await waitForPending(id);
    assert.ok(Date.parse(pending.expires_at) - Date.parse(pending.requested_at) === 2000);

    const result = await cliResult(id);
    assert.equal(result.status, 'stopped');
    assert.equal(result.stop_reason, 'approval_timeout');
    assert.deepEqual(result.trace.at(-1), {
      step: 2,
      tool: 'issue_refund',
      args_hash: pending.args_hash,
      ok: false,
      stop_reason: 'approval_timeout',
    });
    assert.equal(fixture.llm.requests(id).length, 2, 'no further decision after the timeout');
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 0);
    const { stdout, code } = await runCli(fixture.env, ['result', id]);
    assert.equal(code, 4, 'a run stopped on approval_timeout exits 4');
    assert.match(stdout, /result: stopped \(approval_timeout\)/);
    assert.match(stdout, /approval timeout/);
  });

  it('escalate: the run waits for a person; `agent answer` is the observation the model sees next', async () => {
    const user = fixture.refunds.nextUser();
    const id = await cliRun(user, [
      { action: { kind: 'escalate', reason: 'The user threatens a chargeback; a person should decide.' } },
      finalAnswer('A support lead will call you today.'),
    ]);
    const pending = await waitForPending(id);
    assert.deepEqual(
      [pending.kind, pending.id, pending.reason],
      ['escalation', '1-escalate', 'The user threatens a chargeback; a person should decide.'],
    );
    const { stdout: status } = await cli(['status', id]);
    assert.match(
      status,
      /awaiting:\s+a person \(the model escalated\) of step 1: escalation: "The user threatens a chargeback/,
    );

    const { stdout } = await cli(['answer', id, 'Call them back today; no refund beyond policy.']);
    assert.match(stdout, /^answered 1-escalate/);
    const result = await cliResult(id);
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(lastObservation(id), {
      tool: 'escalate',
      ok: true,
      data: { answer: 'Call them back today; no refund beyond policy.' },
      source: 'operator',
      trust: 'untrusted',
      bytes: 59,
      truncated: false,
    });
    assert.deepEqual(result.history[0]!.action, {
      kind: 'escalate',
      reason: 'The user threatens a chargeback; a person should decide.',
    });
    assert.equal(result.trace[0]!.approval, 'answer');
    assert.equal(result.usage.tool_calls, 0);
  });

  it("a person's time is not the agent's: a wait longer than max_seconds does not stop the run", async () => {
    const user = fixture.refunds.nextUser();
    const id = await cliRun(user, [billingOf(user), refundOf(user, 49), finalAnswer()], [], 3);
    const pending = await waitForPending(id);
    // The thing under test is elapsed time itself: let the wait outlast the 3 s budget.
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    const { stdout: status } = await cli(['status', id]);
    assert.match(status, /phase:\s+awaiting_approval/);
    await cli(['approve', id, '--call', pending.id]);

    const result = await cliResult(id);
    assert.equal(result.stop_reason, 'success');
    assert.ok(result.usage.elapsed_ms < 3_000, `agent time ${result.usage.elapsed_ms} ms excludes the wait`);
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 1);
  });

  it('cancel while waiting for approval: ends cleanly (Canceled, stop_reason cancelled); nothing is written', async () => {
    const user = fixture.refunds.nextUser();
    const id = await cliRun(user, [billingOf(user), refundOf(user, 49), finalAnswer()]);
    await waitForPending(id);
    await cli(['cancel', id, '--reason', 'customer withdrew the request']);

    const result = await cliResult(id);
    assert.equal(result.stop_reason, 'cancelled');
    const handle = await existingRun(fixture.client, id);
    assert.equal((await handle.describe()).status.name, 'CANCELLED');
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled = events
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => e.activityTaskScheduledEventAttributes!.activityType?.name);
    assert.ok(!scheduled.includes('issue_refund'), `no refund was scheduled: ${scheduled.join(', ')}`);
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 0);
    await cliFails(['approve', id], /has ended \(CANCELLED\)/);
  });

  it('bad input to the CLI and the Update gets a one-line error and changes nothing', async () => {
    await cliFails(['approve', uniqueId('no-such-run')], /no run with id/);
    await cliFails(['reject', uniqueId('no-such-run'), '--reason', 'x'], /no run with id/);
    await cliFails(['approve'], /missing ID/, 2);
    await cliFails(['reject', 'x', '--reason'], /--reason needs a value/, 2);
    await cliFails(['answer', 'x', '   '], /must not be empty/, 2);

    // A run that is deciding: nothing awaits approval yet.
    const user = fixture.refunds.nextUser();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const replies = [billingOf(user), refundOf(user, 49), finalAnswer()];
    const id = await cliRun(user, async (i) => {
      if (i === 0) await released;
      return replies[i]!;
    });
    await fixture.llm.waitFor((r) => r.workflowId === id, 20_000);
    await cliFails(['approve', id], new RegExp(`nothing is awaiting approval in run ${id}`));
    await cliFails(
      ['approve', id, '--call', '2-issue_refund-000000000000'],
      /refused the answer: nothing is awaiting approval in this run/,
    );
    release();

    const pending = await waitForPending(id);
    await cliFails(
      ['approve', id, '--call', '2-issue_refund-000000000000'],
      new RegExp(`is not what awaits approval \\(pending: ${pending.id}\\)`),
    );
    await cliFails(['answer', id, 'sure'], /only an escalation takes an answer/);
    await cliFails(['reject', id, '--call', '7-escalate'], /is not what awaits approval/);

    // Nothing changed: the same call still waits, no update was accepted, nothing was written.
    const still = await waitForPending(id);
    assert.deepEqual(still, pending);
    assert.equal(await updateEvents(id), 0);
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 0);

    // The right answer still works, and a repeat of it is harmless.
    await cli(['approve', id, '--call', pending.id]);
    const { stdout: again } = await cli(['approve', id, '--call', pending.id]).catch(
      (err: { stdout: string; stderr: string }) => ({ stdout: err.stderr }),
    );
    assert.match(again, /already approved: nothing changed|has ended \(COMPLETED\)/);
    const result = await cliResult(id);
    assert.equal(result.stop_reason, 'success');
    assert.equal((await fixture.refunds.rows({ user_id: user })).length, 1);
  });
});
