// The demo's refund act (scripts/demo-refund.ts) with the offline model that proposes the refund:
// facts gathered, refund proposed, approval asked, approved from "a second terminal" (the CLI),
// effect confirmed, on the real server with a real worker process.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { ScriptedLlmServer } from '../scripts/scripted-llm-server';
import { refundApprovalDemoModel } from '../scripts/offline-model';
import { refundDemoStore, runRefundDemo, REFUND_DEMO_USER_ID } from '../scripts/demo-refund';
import type { RefundDemoStore } from '../scripts/demo-refund';
import type { TemporalEnv } from '../runtime/temporal-env';
import { connectClient, DIST, startWorkerProcess, testEnv, uniqueId } from './helpers/harness';
import type { WorkerProcess } from './helpers/harness';
import { refundFixture } from './helpers/refund-fixtures';
import type { RefundFixture } from './helpers/refund-fixtures';

const exec = promisify(execFile);

let llm: ScriptedLlmServer;
let client: Client;
let env: TemporalEnv;
let worker: WorkerProcess;
let fx: RefundFixture;
let store: RefundDemoStore;

before(async () => {
  llm = await ScriptedLlmServer.start({ defaultScript: refundApprovalDemoModel });
  fx = refundFixture();
  store = refundDemoStore({ AGENT_REFUNDS_DB: fx.dbFile });
  env = testEnv(uniqueId('demo-refund'));
  // The seeds' data (user 42: pro_monthly, USD 49.00, 10 days ago), the fixture's database.
  worker = startWorkerProcess(env, { OPENAI_BASE_URL: llm.baseUrl, AGENT_REFUNDS_DB: fx.dbFile });
  await worker.ready;
  client = await connectClient(env);
});

after(async () => {
  await worker?.stop();
  await client?.connection.close();
  await llm?.close();
  store?.close();
  fx?.cleanup();
});

describe('npm run demo -- --refund', () => {
  it('gathers facts, proposes the refund, waits, is approved from a second terminal, confirms the effect', async () => {
    const out: string[] = [];
    let approved: Promise<unknown> | undefined;
    const workflowId = await runRefundDemo(client, env, {
      say: (text = '') => out.push(text),
      interrupted: new Promise<never>(() => undefined),
      autoApprove: false,
      store,
      onPending: (_pending, id) => {
        approved = exec(process.execPath, [path.join(DIST, 'client', 'cli.js'), 'approve', id], {
          env: { ...process.env, TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: env.namespace },
        });
      },
    });
    const { stdout } = (await approved) as { stdout: string };
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

    const rows = store.refunds().list({ user_id: REFUND_DEMO_USER_ID });
    assert.deepEqual(
      rows.map((r) => [r.state, r.amount_usd, r.workflow_id]),
      [['confirmed', 49, workflowId]],
    );
  });
});
