// Three worker processes, one refunds ledger in PostgreSQL (the one deploy/setup-postgres.sh made
// for `npm test -- --server postgres`, as compose makes it): refund runs in flight, every first
// attempt stalled inside the effect (before or after its commit, by worker), then every worker
// SIGKILLed in turn and replaced. Retries land on other workers, which find the record by key in
// the shared ledger. At the end: exactly one refund per key, one per run, and no user refunded
// more than paid, including two runs for one user racing on different workers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { runResult, startRun } from '../../client/agent-client';
import { answerApproval, pendingApproval } from '../../client/approvals';
import type { RefundRecord } from '../../domains/support/refund-ledger';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { billingOf, finalAnswer, refundInput, refundOf } from '../helpers/refund-fixtures';

const STALL_MS = '60000'; // far past the 2 s heartbeat timeout: a stalled attempt is retried elsewhere
/** One fault per worker, so both sides of the commit are crossed by a retry on another worker. */
const FAULTS: Record<string, string>[] = [
  { AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS: STALL_MS },
  { AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: STALL_MS },
  { AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: STALL_MS },
];

const workers: WorkerProcess[] = [];

// The fixture's ledger is the profile's PostgreSQL (in a schema of this file's own): every
// worker's refunds go there, and the test reads them there.
const fixture = agentFixture({
  queue: 'shared-ledger',
  refunds: true,
  worker: false,
  setup: async () => {
    assert.equal(fixture.refunds.ledger, 'postgresql', 'run this file with --server postgres');
    for (const faults of FAULTS) workers.push(fixture.startWorker(faults));
    await Promise.all(workers.map((w) => w.ready));
  },
});

function paidBy(user: number): number {
  const data = JSON.parse(readFileSync(fixture.refunds.dataFile, 'utf8')) as {
    billing: Record<string, { price_usd: number }>;
  };
  return data.billing[String(user)]!.price_usd;
}

async function startRefundRun(user: number, answer?: string) {
  const id = uniqueId('shared-ledger');
  fixture.llm.script(id, [billingOf(user), refundOf(user), finalAnswer(answer)]);
  const handle = await startRun(
    fixture.client,
    fixture.env,
    agentInput(refundInput(user, { budget: { max_seconds: 300 } })),
    id,
  );
  return { id, user, handle };
}

describe('one PostgreSQL refunds ledger shared by three worker processes', () => {
  it('refunds in flight, every worker SIGKILLed in turn: exactly one refund per key, never more than paid', async () => {
    const users = [fixture.refunds.nextUser(), fixture.refunds.nextUser(), fixture.refunds.nextUser()];
    const contested = fixture.refunds.nextUser();
    const runs = [
      ...(await Promise.all(users.map((u) => startRefundRun(u)))),
      // Two runs for one user, each asking for all of what was paid: the ledger lets one through.
      // Their answers state no amount: the one refused is answered too.
      await startRefundRun(contested, 'Your refund request was handled.'),
      await startRefundRun(contested, 'Your refund request was handled.'),
    ];
    for (const run of runs) {
      await eventually(`${run.id} awaiting approval`, () => pendingApproval(run.handle), 120_000);
      await answerApproval(fixture.client, run.id, { decision: 'approve' });
    }

    // Every refund has reached the ledger: each first attempt now stalls in the effect on some worker.
    const planned = await eventually(
      'every run has its refund record',
      async () => {
        const all = await fixture.refunds.rows();
        const mine = runs.map((r) => all.filter((row) => row.workflow_id === r.id));
        return mine.every((m) => m.length > 0) ? mine.flat() : undefined;
      },
      120_000,
    );
    assert.equal(planned.length, runs.length);

    // Crashes in between: each worker SIGKILLed with its attempts in flight, a fresh one (no faults) in its place.
    for (let i = 0; i < workers.length; i++) {
      const pid = workers[i]!.proc.pid;
      await workers[i]!.kill();
      workers[i] = fixture.startWorker();
      await workers[i]!.ready;
      assert.notEqual(workers[i]!.proc.pid, pid);
    }

    const results = await Promise.all(runs.map((r) => runResult(r.handle)));
    const all = await fixture.refunds.rows();
    const ofRun = (id: string): RefundRecord[] => all.filter((row) => row.workflow_id === id);
    const summary = JSON.stringify(all.map((r) => [r.workflow_id, r.idempotency_key, r.state, r.rejection, r.fence]));

    // One record per key (the table's unique key), one key per run, none left unfinished.
    assert.equal(new Set(all.map((r) => r.idempotency_key)).size, all.length, summary);
    for (const [i, run] of runs.entries()) {
      assert.equal(ofRun(run.id).length, 1, `${run.id}: one refund record: ${summary}`);
      assert.equal(results[i]!.stop_reason, 'success', `${run.id}: ${results[i]!.stop_reason}`);
      const effects = (results[i]!.effects ?? []).filter((e) => e.tool === 'issue_refund');
      assert.equal(effects.length, 1, `${run.id}: one refund effect`);
      assert.equal(effects[0]!.idempotency_key, ofRun(run.id)[0]!.idempotency_key, 'the effect names the ledger row');
    }
    for (const user of users) {
      assert.deepEqual(
        all.filter((r) => r.user_id === user).map((r) => [r.state, r.amount_usd]),
        [['confirmed', 49]],
        `user ${user}: ${summary}`,
      );
    }
    const contestedRows = all.filter((r) => r.user_id === contested);
    assert.deepEqual(
      contestedRows.map((r) => [r.state, r.rejection]).sort(),
      [
        ['confirmed', null],
        ['rejected', 'exceeds_paid'],
      ],
      `user ${contested}: one refund confirmed, the other refused by the ledger: ${summary}`,
    );
    for (const user of [...users, contested]) {
      const confirmed = all.filter((r) => r.user_id === user && r.state === 'confirmed');
      const total = confirmed.reduce((sum, r) => sum + r.amount_usd, 0);
      assert.ok(total <= paidBy(user), `user ${user}: refunded ${total} of ${paidBy(user)} paid`);
    }
    // The retries were real: every first attempt stalled, so each refund was settled by a later
    // attempt that found its record by key in the shared ledger.
    for (const [i, run] of runs.entries()) {
      const entry = results[i]!.history.find((h) => h.action.kind === 'tool' && h.action.name === 'issue_refund');
      const data = entry?.observation.data as { reconciled?: boolean } | undefined;
      assert.equal(data?.reconciled, true, `${run.id}: the refund was reconciled by key: ${JSON.stringify(entry)}`);
    }
  });
});
