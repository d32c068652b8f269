// The demo's refund act (scripts/demo-refund.ts) with the offline model that proposes the refund:
// facts gathered, refund proposed, approval asked, approved from "a second terminal" (the CLI),
// effect confirmed, on the real server with a real worker process.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { refundApprovalDemoModel } from '../../offline-model/offline-model';
import { refundDemoStore, runRefundDemo, REFUND_DEMO_USER_ID } from '../../scripts/demo-refund';
import type { RefundDemoStore } from '../../scripts/demo-refund';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import type { CliResult } from '../helpers/cli';

// The support data's user 42 (pro_monthly, USD 49.00, 10 days ago) is in the fixture's data too.
const fixture = agentFixture({
  queue: 'demo-refund',
  refunds: true,
  llm: { defaultScript: refundApprovalDemoModel },
  setup: () => {
    store = refundDemoStore({ AGENT_REFUNDS_DB: fixture.refunds.dbFile });
  },
});
let store: RefundDemoStore;
after(() => store?.close());

describe('npm run demo -- --refund', () => {
  it('gathers facts, proposes the refund, waits, is approved from a second terminal, confirms the effect', async () => {
    const out: string[] = [];
    let approved: Promise<CliResult> | undefined;
    const workflowId = await runRefundDemo(fixture.client, fixture.env, {
      say: (text = '') => out.push(text),
      interrupted: new Promise<never>(() => undefined),
      autoApprove: false,
      store,
      onPending: (_pending, id) => {
        approved = runCli(fixture.env, ['approve', id]);
      },
    });
    const { code, stdout, stderr } = (await approved)!;
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^approved 4-issue_refund-\w+ in /);
    const text = out.join('\n');

    assert.match(text, /step 1: get_user_profile \(\w+\) ok/);
    assert.match(text, /step 2: get_user_billing \(\w+\) ok/);
    assert.match(text, /step 3: search_policy \(\w+\) ok/);
    assert.match(
      text,
      /The run waits for an operator to approve issue_refund \{"user_id":42,"amount_usd":49,"reason":"pro_monthly first paid 10 days ago, within the 14-day refund window"\} for USD 49\.00/,
    );
    assert.match(text, new RegExp(`npm run agent -- approve ${workflowId}`));
    assert.match(text, /step 4: issue_refund \(\w+\) ok \(approved by operator\)/);
    assert.match(text, /result: ok \(success\)/);
    assert.match(text, /answer: Done: USD 49\.00 is refunded to the original payment method \(refund #1\)\./);
    assert.match(text, /#1 user 42 USD 49\.00 confirmed, idempotency key /);
    // Lines come in the order a reader follows.
    const order = ['step 3: search_policy', 'waits for an operator', 'step 4: issue_refund', 'result: ok'].map((s) =>
      text.indexOf(s),
    );
    assert.deepEqual(
      [...order].sort((a, b) => a - b),
      order,
    );

    const rows = store.refunds().listSync({ user_id: REFUND_DEMO_USER_ID });
    assert.deepEqual(
      rows.map((r) => [r.state, r.amount_usd, r.workflow_id]),
      [['confirmed', 49, workflowId]],
    );
  });
});
