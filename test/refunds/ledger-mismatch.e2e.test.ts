// A fleet whose workers share a refunds ledger in PostgreSQL, and one worker started without
// AGENT_REFUNDS_DATABASE_URL (its ledger: a SQLite file of its own). A refund committed in
// PostgreSQL whose report was lost is retried on that worker: it must not look for the key in its
// own file, find nothing and refund again; it refuses, and a worker on PostgreSQL finishes the call.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { runResult } from '../../client/agent-client';
import { answerApproval, pendingApproval } from '../../client/approvals';
import { PostgresRefundService } from '../../domains/support/backend/refunds/postgres';
import { RefundService } from '../../domains/support/backend/refunds/service';
import { REFUND_LEDGER_MISMATCH } from '../../domains/support/tools/issue_refund';
import { eventually } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { postgresLedger } from '../helpers/postgres-ledger';
import type { PostgresLedger } from '../helpers/postgres-ledger';
import { billingOf, finalAnswer, refundInput, refundOf } from '../helpers/refund-fixtures';

let shared: PostgresLedger;
let ledger: PostgresRefundService;

const fixture = agentFixture({
  queue: 'ledger-mismatch',
  refunds: true,
  worker: false,
  prepare: async () => {
    shared = await postgresLedger({ fresh: true });
    ledger = PostgresRefundService.open(shared.url);
  },
});
after(async () => {
  await ledger?.close();
  await shared?.stop();
});

describe("a worker whose refunds ledger is not the fleet's", () => {
  it("a retry there refuses to act; a worker on the fleet's ledger finishes: one refund, in PostgreSQL", async () => {
    const onPostgres = { AGENT_REFUNDS_DATABASE_URL: shared.url };
    const strayFile = path.join(fixture.refunds.dir, 'stray', 'refunds.sqlite');
    // The first attempt commits in PostgreSQL, then hangs without heartbeats: it is retried.
    const first = fixture.startWorker({ ...onPostgres, AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: '60000' });
    await first.ready;

    const user = fixture.refunds.nextUser();
    const { id, handle } = await fixture.start(
      [billingOf(user), refundOf(user), finalAnswer()],
      refundInput(user, { budget: { max_seconds: 300 } }),
    );
    await eventually('the refund awaiting approval', () => pendingApproval(handle), 60_000);
    await answerApproval(fixture.client, id, { decision: 'approve' });
    await eventually(
      'the refund committed in PostgreSQL',
      async () => ((await ledger.list({ workflow_id: id }))[0]?.state === 'confirmed' ? true : undefined),
      60_000,
    );
    // Gone before its hung attempt times out (2 s without heartbeats): the retry goes to the stray worker.
    await first.kill();

    const stray = fixture.startWorker({ AGENT_REFUNDS_DATABASE_URL: '', AGENT_REFUNDS_DB: strayFile });
    await stray.ready;
    let seen = '';
    const refused = await eventually(
      'the stray worker refusing the retry',
      async () => {
        const { raw } = await handle.describe();
        const call = raw.pendingActivities?.find((a) => a.activityType?.name === 'issue_refund');
        seen = JSON.stringify(call ?? raw.pendingActivities ?? null);
        const failure = call?.lastFailure;
        return failure?.applicationFailureInfo?.type === REFUND_LEDGER_MISMATCH ? failure.message : undefined;
      },
      60_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; the call: ${seen}; the stray worker: ${stray.output().slice(-2000)}`);
    });
    await stray.kill(); // before its backoff hands it the remaining attempts
    assert.match(refused ?? '', /an earlier attempt used a postgresql refunds ledger, this worker's is sqlite/);

    fixture.startWorker(onPostgres);
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    const effects = (result.effects ?? []).filter((e) => e.tool === 'issue_refund');
    assert.deepEqual(
      effects.map((e) => e.state),
      ['confirmed'],
    );
    assert.deepEqual(
      (await ledger.list({ user_id: user })).map((r) => [r.workflow_id, r.state]),
      [[id, 'confirmed']],
      "one refund, in the fleet's ledger",
    );
    const strayLedger = RefundService.open(strayFile);
    try {
      assert.deepEqual(await strayLedger.list(), [], "nothing in the stray worker's own ledger");
    } finally {
      await strayLedger.close();
    }
  });
});
