// A retail write whose PostgreSQL session ends (pg_terminate_backend, as a restart or a failover
// does to every session) while it waits for its conversation's lock, held by another session as a
// second worker writing that conversation would: the worker lives on (an 'error' event on a
// checked-out connection must not kill it), the write is retried and applied once.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as pg from 'pg';
import { runResult, runState } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import { withRetailStore } from '../../domains/retail/backend/open';
import { retailTools } from '../../domains/retail/tools/index';
import { byStep, final, tool } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';

const URL = process.env.AGENT_TEST_REFUNDS_DATABASE_URL;
// The PostgreSQL profile (`npm test -- --server postgres`) sets it; run anywhere else, the file fails.
if (!URL) throw new Error('AGENT_TEST_REFUNDS_DATABASE_URL is unset: run this file with --server postgres');
const fixture = agentFixture({ queue: 'retail-session-loss', workerEnv: { AGENT_RETAIL_DATABASE_URL: URL } });

const ORDER = '#W6779827'; // ethan_lopez_6291's, pending in τ²-bench's database

describe('a retail write whose PostgreSQL session ends', () => {
  it('does not kill the worker; the write is applied once', async () => {
    const { id, handle } = await fixture.start(
      byStep({
        1: tool('find_user_id_by_email', { email: 'ethan.lopez8943@example.com' }),
        2: tool('cancel_pending_order', { order_id: ORDER, reason: 'no longer needed' }),
        3: final('Cancelled.'),
      }),
      {
        goal: 'Serve the retail customer.',
        domain: 'retail',
        principal: undefined,
        allow: retailTools.map((t) => t.name),
        conversation: {},
        budget: { max_steps: 6, max_tool_calls: 4, max_seconds: 300 },
      },
    );
    const conversation = `${id}/${handle.firstExecutionRunId}`;
    // Another session holds the conversation's lock, as another worker's write in progress does.
    const other = new pg.Client({ connectionString: URL });
    const probe = new pg.Client({ connectionString: URL });
    await other.connect();
    await probe.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`agent.retail.run:${conversation}`]);
      await eventually('the run to ask for consent', async () => {
        const state = await runState(handle);
        return state.phase === 'awaiting_customer' && state.conversation?.last_message?.consent ? true : undefined;
      });
      await sayToRun(fixture.client, id, { text: 'Yes, please.' });
      // Read from outside the holder's transaction: pg_stat_activity is a snapshot per transaction.
      const waiting = await eventually('the write waiting for the conversation lock', async () => {
        const { rows } = await probe.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%' AND pid <> pg_backend_pid()",
        );
        return rows[0]?.pid;
      });
      await other.query('SELECT pg_terminate_backend($1)', [waiting]);
      await other.query('COMMIT');

      // The retry of the write, on this worker if it lives: the write applied, or the worker gone.
      const proc = fixture.worker.proc;
      const exited = () => proc.exitCode !== null || proc.signalCode !== null;
      await eventually(
        'the write applied, or the worker gone',
        async () =>
          exited() || (await runState(handle)).effects?.some((e) => e.state === 'confirmed') ? true : undefined,
        60_000,
      );
      assert.equal(exited(), false, `the worker died:\n${fixture.worker.output().split('\n').slice(-12).join('\n')}`);
      const result = await runResult(handle);
      assert.deepEqual(
        result.effects?.map((e) => [e.tool, e.state]),
        [['cancel_pending_order', 'confirmed']],
      );
      await withRetailStore({ url: URL }, async (store) => {
        assert.deepEqual(
          (await store.writesOf(conversation)).map((w) => w.state),
          ['applied'],
        );
        assert.equal((await store.database(conversation)).orders[ORDER]!.status, 'cancelled');
      });
    } finally {
      await other.end().catch(() => undefined);
      await probe.end().catch(() => undefined);
    }
  });
});
