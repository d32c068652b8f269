// Faults only the production topology has (run by `npm test -- --server postgres`): PostgreSQL
// itself restarted, orderly and by a crash, while refund runs are in flight; and the multi-service
// Temporal server killed (SIGKILL) and restarted while runs are in flight and a worker is polling.
// Each time: every run completes with its whole trace, and every user has exactly one refund.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runResult, startRun } from '../../client/agent-client';
import { answerApproval, pendingApproval } from '../../client/approvals';
import type { PostgresTemporalServer } from '../../local-servers/postgres-server';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { billingOf, finalAnswer, refundInput, refundOf } from '../helpers/refund-fixtures';
import { byStep } from '../../offline-model/scripted-replies';
import { serverEnv, startOwnPostgresServer, stopOwnServer } from '../helpers/test-server';

let server: PostgresTemporalServer;

// A server of this file's own: the tests restart its PostgreSQL and kill its Temporal server. The
// refunds ledger lives in that PostgreSQL too (as in compose): its restarts land on refunds in flight.
const fixture = agentFixture({
  queue: 'pg-faults',
  refunds: true,
  refundsLedgerUrl: () => server.ledgerUrl,
  server: () => serverEnv(server),
  prepare: async () => {
    server = await startOwnPostgresServer();
  },
});
after(() => stopOwnServer(server));

const RUNS = 3;

/** RUNS refund runs, each one's billing decision slow enough for a fault to land while it is in flight. */
async function startRefundRuns(prefix: string) {
  return Promise.all(
    Array.from({ length: RUNS }, async () => {
      const user = fixture.refunds.nextUser();
      const id = uniqueId(prefix);
      // By step: an attempt retried because the server died under it gets the same answer.
      fixture.llm.script(id, byStep({ 1: billingOf(user, { delayMs: 1_500 }), 2: refundOf(user), 3: finalAnswer() }));
      const handle = await startRun(
        fixture.client,
        fixture.env,
        agentInput(refundInput(user, { budget: { max_seconds: 300 } })),
        id,
      );
      return { id, user, handle };
    }),
  );
}

/** The tail of a run's history and its pending activities: what a timeout needs to be diagnosed. */
async function lastEvents(handle: Runs[number]['handle']): Promise<string> {
  const events = (await handle.fetchHistory()).events ?? [];
  const { raw } = await handle.describe();
  const pending = (raw.pendingActivities ?? []).map(
    (a) => `${a.activityType?.name} attempt ${a.attempt} state ${a.state}`,
  );
  const tail = events.slice(-8).map((e) => `${e.eventId} ${String(e.eventType)}`);
  return `events ${tail.join(', ')}; pending activities: ${pending.join(', ') || 'none'}; pending workflow task: ${JSON.stringify(raw.pendingWorkflowTask ?? null)}`;
}

type Runs = Awaited<ReturnType<typeof startRefundRuns>>;

/** Approves each run's refund when it asks (the approval is itself an Update the server must keep). */
async function approveAll(runs: Runs): Promise<void> {
  for (const run of runs) {
    await eventually('a refund awaiting approval', () => pendingApproval(run.handle), 60_000).catch(
      async (err: Error) => {
        throw new Error(`${run.id}: ${err.message}; the run so far: ${await lastEvents(run.handle)}`);
      },
    );
    await answerApproval(fixture.client, run.id, { decision: 'approve' });
  }
}

/** Every run succeeded with both tool steps in its trace, and each user has exactly one confirmed refund. */
async function assertAllDone(runs: Runs): Promise<void> {
  for (const run of runs) {
    const result = await runResult(run.handle);
    assert.equal(result.stop_reason, 'success', `${run.id}: ${result.stop_reason}`);
    assert.deepEqual(
      result.trace.map((t) => [t.tool, t.ok]),
      [
        ['get_user_billing', true],
        ['issue_refund', true],
      ],
      `${run.id}: every step is in the trace`,
    );
    const rows = await fixture.refunds.rows({ user_id: run.user });
    assert.equal(rows.length, 1, `user ${run.user}: exactly one refund`);
    assert.equal(rows[0]!.state, 'confirmed');
  }
}

describe('PostgreSQL-backed server: faults of the database and of the server process', () => {
  it('PostgreSQL restarted (orderly, then crashed) while refund runs are in flight: nothing lost, no duplicate', async () => {
    const runs = await startRefundRuns('pg-restart');
    await fixture.llm.waitFor((r) => runs.some((run) => r.workflowId === run.id), 30_000);
    const pid = server.postgres.pid;
    await server.postgres.restart('fast');
    assert.notEqual(server.postgres.pid, pid, 'a new postmaster');

    await approveAll(runs);
    // The refunds are being committed and recorded: the database crashes under them.
    await server.postgres.restart('crash');
    await assertAllDone(runs);
  });

  it('Temporal server killed and restarted with runs in flight and a worker polling: nothing lost, no duplicate', async () => {
    const runs = await startRefundRuns('server-kill');
    await fixture.llm.waitFor((r) => runs.some((run) => r.workflowId === run.id), 30_000);
    const pid = server.pid;
    await server.kill();
    await server.restart();
    assert.notEqual(server.pid, pid, 'a new server process');

    await approveAll(runs);
    await server.kill();
    await server.restart();
    await assertAllDone(runs);
  });
});
