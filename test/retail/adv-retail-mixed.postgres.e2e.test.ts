// Adversary: docs/domains.md and docs/deployment.md promise that a conversation's retail database is
// the same on every worker (PostgreSQL when AGENT_RETAIL_DATABASE_URL is set: "every worker, on any
// host"). A rolling deploy where one replica lacks the URL (the embedded SQLite default) serves the
// same conversation from another database: the cancelled order reads as pending again. The refunds
// ledger refuses exactly this (RefundLedgerMismatch); the retail store does not.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'node:os';
import * as path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { runResult } from '../../client/agent-client';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';
import { final, message, tool } from '../../offline-model/scripted-replies';
import { sayUpdate, stateQuery } from '../../common/agent-messages';

const RETAIL_DIR = process.env.TAU2_RETAIL_DIR ?? '/work/shared/tau2-retail';
const ORDER = '#W5918442';
const EMAIL = 'sofia.rossi2645@example.com';
const sqliteDir = mkdtempSync(path.join(os.tmpdir(), 'adv-retail-mixed-'));

const fixture = agentFixture({ queue: 'adv-retail-mixed', worker: false });

describe('adversary: one retail store for every worker', () => {
  after(() => rmSync(sqliteDir, { recursive: true, force: true }));
  it('a replica without AGENT_RETAIL_DATABASE_URL does not serve a conversation another database holds', async () => {
    const pgUrl = process.env.AGENT_TEST_REFUNDS_DATABASE_URL;
    assert.ok(pgUrl, 'run with --server postgres');
    const onPostgres = fixture.startWorker({ TAU2_RETAIL_DIR: RETAIL_DIR, AGENT_RETAIL_DATABASE_URL: pgUrl });
    await onPostgres.ready;

    const { id, handle } = await fixture.start(
      [
        tool('find_user_id_by_email', { email: EMAIL }),
        tool('cancel_pending_order', { order_id: ORDER, reason: 'no longer needed' }),
        message('Your order is cancelled. Anything else?'),
        tool('get_order_details', { order_id: ORDER }),
        final('Checked your order.'),
      ],
      {
        domain: 'retail',
        principal: undefined,
        goal: 'Help the customer with their orders.',
        allow: ['find_user_id_by_email', 'cancel_pending_order', 'get_order_details'],
        conversation: { idle_timeout_seconds: 600 },
        budget: { max_steps: 10, max_tool_calls: 10, max_seconds: 300 },
      },
    );
    const waiting = (agentMessages: number) =>
      eventually(
        `the run to wait for the customer after ${agentMessages} agent message(s)`,
        async () => {
          const s = await handle.query(stateQuery);
          return s.phase === 'awaiting_customer' && (s.conversation?.agent_messages ?? 0) >= agentMessages
            ? s
            : undefined;
        },
        60_000,
      );
    await waiting(1); // the consent question
    await handle.executeUpdate(sayUpdate, { args: [{ text: 'yes' }] });
    await waiting(2); // the cancel ran on the PostgreSQL replica; the agent said so

    // The rolling deploy: the next replica lacks the URL (its default: a SQLite file of its own).
    await onPostgres.stop();
    const onSqlite = fixture.startWorker({
      TAU2_RETAIL_DIR: RETAIL_DIR,
      AGENT_RETAIL_DB: path.join(sqliteDir, 'retail.sqlite'),
    });
    await onSqlite.ready;
    await handle.executeUpdate(sayUpdate, { args: [{ text: 'Is it really cancelled?' }] });
    await runResult(handle);

    // What the model read last: the cancel's result (step 2) and the order read on the other replica (step 4).
    // (The whole run as chat messages: every tool result is one message's text.)
    const body = fixture.llm.requests(id).at(-1)?.body as { messages: Array<{ content: unknown }> };
    const seen = body.messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
    assert.ok(seen.includes('"status":"cancelled"'), 'the cancel ran and the model saw it');
    assert.ok(
      !seen.includes('"status":"pending"'),
      'the replica without the URL read the cancelled order from another database: status pending',
    );
  });
});
