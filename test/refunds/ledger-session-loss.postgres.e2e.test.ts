// Found by an adversary, with a real worker on the shared PostgreSQL ledger (AGENT_TEST_REFUNDS_DATABASE_URL:
// `--server postgres`, or any PostgreSQL URL): PostgreSQL ends the session of a refund's confirm
// (pg_terminate_backend, as a restart or a failover does to every session) while it waits for the
// user's lock. The worker must live on and the refund be made once; the refund is (a second
// worker finishes the run), but the first worker dies of an unhandled 'error' event.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as pg from 'pg';
import { answerApproval, pendingApproval } from '../../client/approvals';
import { runResult } from '../../client/agent-client';
import { agentFixture } from '../helpers/agent-fixture';
import { billingOf, finalAnswer, refundInput, refundOf } from '../helpers/refund-fixtures';

const URL = process.env.AGENT_TEST_REFUNDS_DATABASE_URL;
// The PostgreSQL profile (`npm test -- --server postgres`) sets it; run anywhere else, the file fails.
if (!URL) throw new Error('AGENT_TEST_REFUNDS_DATABASE_URL is unset: run this file with --server postgres');
const fixture = agentFixture({
  queue: 'adv-ledger-crash',
  refunds: true,
  workerEnv: URL ? { AGENT_REFUNDS_DATABASE_URL: URL } : {},
});

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const found = await probe();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('a refund confirm whose PostgreSQL session ends', () => {
  it('does not kill the worker', async () => {
    const user = 930_000 + Math.floor(Math.random() * 60_000);
    fixture.refunds.addPayingUser(user, `User ${user}`, 10);
    // Another worker's confirm for this user holds the user's lock.
    const other = new pg.Client({ connectionString: URL });
    await other.connect();
    await other.query('BEGIN');
    const probe = new pg.Client({ connectionString: URL });
    await probe.connect();
    await other.query("SELECT pg_advisory_xact_lock(hashtextextended('agent.refunds.user', $1))", [user]);
    try {
      const { id, handle } = await fixture.start(
        [billingOf(user), refundOf(user, 49), finalAnswer()],
        refundInput(user),
      );
      await until('the approval', () => pendingApproval(handle));
      await answerApproval(fixture.client, id, { decision: 'approve' });
      // Read from outside the holder's transaction: pg_stat_activity is a snapshot per transaction.
      const waiting = await until('the confirm waiting for the user lock', async () => {
        const { rows } = await probe.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%' AND pid <> pg_backend_pid()",
        );
        return rows[0]?.pid;
      });
      await other.query('SELECT pg_terminate_backend($1)', [waiting]);
      await other.query('COMMIT');
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const proc = fixture.worker.proc;
      const died = proc.exitCode !== null || proc.signalCode !== null;
      // Whatever happened to it, a second worker finishes the run: the refund is made and reported once.
      fixture.startWorker({ AGENT_REFUNDS_DATABASE_URL: URL! });
      const result = await runResult(handle);
      const refunds = result.effects?.filter((e) => e.tool === 'issue_refund') ?? [];
      assert.deepEqual(
        refunds.map((e) => e.state),
        ['confirmed'],
      );
      const ledger = await probe.query<{ state: string }>('SELECT state FROM refunds WHERE user_id = $1', [user]);
      assert.deepEqual(
        ledger.rows.map((r) => r.state),
        ['confirmed'],
      );
      assert.ok(
        !died,
        `the worker died (exit ${proc.exitCode}):\n${fixture.worker
          .output()
          .split('\n')
          .filter((l) => /terminat|Error|emit/.test(l))
          .slice(0, 8)
          .join('\n')}`,
      );
    } finally {
      await other.end().catch(() => undefined);
      await probe.end().catch(() => undefined);
    }
  });
});
