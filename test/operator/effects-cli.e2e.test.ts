// A run's effects as an operator sees them through the CLI: `watch` prints the refund as it is
// confirmed, `result`, `status` and `list` show it; a refund cut off by `agent cancel` whose lookup
// fails is shown AMBIGUOUS (money may have moved) by cancel, result, status and list.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import { ScriptedLlmServer } from '../../offline-model/scripted-llm-server';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { startRun } from '../../client/agent-client';
import { answerApproval, pendingApproval } from '../../client/approvals';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { agentInput, connectClient, eventually, testEnv, uniqueId } from '../helpers/harness';
import { startWorkerProcess } from '../../local-servers/worker-process';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { runCli } from '../helpers/cli';
import { billingOf, finalAnswer, REFUND_ALLOW, refundFixture, refundGoal, refundOf } from '../helpers/refund-fixtures';
import type { RefundFixture } from '../helpers/refund-fixtures';

let llm: ScriptedLlmServer;
let client: Client;
let env: TemporalEnv;
let drillEnv: TemporalEnv;
let fx: RefundFixture;
const workers: WorkerProcess[] = [];

before(async () => {
  llm = await ScriptedLlmServer.start();
  fx = await refundFixture({ label: 'effects-cli' });
  env = testEnv(uniqueId('effects-cli'));
  drillEnv = testEnv(uniqueId('effects-drill'));
  const base = { OPENAI_BASE_URL: llm.baseUrl, ...fx.workerEnv };
  workers.push(startWorkerProcess(env, base));
  // The refund's first attempt stalls before its commit, and every lookup by key is refused.
  workers.push(
    startWorkerProcess(drillEnv, {
      ...base,
      AGENT_REFUND_LOOKUP_FAIL: '1',
      AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS: '60000',
    }),
  );
  await Promise.all(workers.map((w) => w.ready));
  client = await connectClient(env);
});

after(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await client?.connection.close();
  await llm?.close();
  await fx?.cleanup();
});

/** A refund run for a user of its own, waiting for approval; the model is scripted by `replies(user)`. */
async function refundRun(on: TemporalEnv, replies: (user: number) => Reply[]) {
  const user = fx.nextUser();
  const id = uniqueId('effects');
  llm.script(id, replies(user));
  const handle = await startRun(
    client,
    on,
    agentInput({ goal: refundGoal(user), principal: String(user), allow: REFUND_ALLOW, budget: { max_seconds: 120 } }),
    id,
  );
  const pending = await eventually('the refund awaiting approval', () => pendingApproval(handle));
  return { id, user, handle, pending };
}

async function listed(id: string, args: string[] = []) {
  return eventually(`${id} listed with its effects`, async () => {
    const r = await runCli(env, ['list', '--limit', '200', ...args]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.includes(id) ? r.stdout : undefined;
  });
}

describe('effects through the CLI', () => {
  it('a confirmed refund: watch prints it as it happens; result, status and list show it', async () => {
    // The final decision takes a while, so a poll sees the effect before the run ends.
    const { id, user } = await refundRun(env, (u) => [
      billingOf(u),
      refundOf(u, 49),
      { ...finalAnswer(), delayMs: 1_500 },
    ]);
    // Approve only once watch has attached: on a loaded machine its start can outlast the whole run.
    let attached: () => void = () => {};
    const watchAttached = new Promise<void>((resolve) => (attached = resolve));
    const watching = runCli(env, ['watch', id], {}, 60_000, (chunk) => {
      if (chunk.includes(`watching ${id}`)) attached();
    });
    await Promise.race([watchAttached, watching]);
    await answerApproval(client, id, { decision: 'approve', operator: 'test' });
    const watched = await watching;
    assert.equal(watched.code, 0, watched.stderr);
    const [row] = await fx.rows({ workflow_id: id });
    const effect = `step 2: issue_refund USD 49.00 confirmed (refund #${row!.id}, key ${row!.idempotency_key})`;
    assert.match(watched.stdout, new RegExp(`^\\d\\d:\\d\\d:\\d\\d effect: ${escape(effect)}$`, 'm'));
    assert.ok(watched.stdout.includes(`\neffects:\n  ${effect}\n`), watched.stdout);

    const result = await runCli(env, ['result', id]);
    assert.ok(result.stdout.includes(`effects:\n  ${effect}\n`), result.stdout);
    const status = await runCli(env, ['status', id]);
    assert.ok(status.stdout.includes(`effects:\n  ${effect}\n`), status.stdout);
    const statusJson = JSON.parse((await runCli(env, ['status', id, '-o', 'json'])).stdout);
    assert.equal(statusJson.effects[0].state, 'confirmed');
    assert.deepEqual(statusJson.effect_counts, { confirmed: 1, rejected: 0, not_made: 0, ambiguous: 0 });

    assert.match(
      await listed(id),
      new RegExp(`^${id}\\s+COMPLETED\\s+ok\\s+success\\s+3\\s+2\\s+${user}\\s+1 confirmed\\s`, 'm'),
    );
    const rows = JSON.parse((await runCli(env, ['list', '-o', 'json', '--limit', '200'])).stdout) as Array<
      Record<string, unknown>
    >;
    assert.deepEqual(rows.find((r) => r.workflow_id === id)?.effects, {
      confirmed: 1,
      rejected: 0,
      not_made: 0,
      ambiguous: 0,
    });
  });

  it('a refund cut off by agent cancel whose lookup fails: AMBIGUOUS in cancel, result, status and list', async () => {
    const { id, handle } = await refundRun(drillEnv, (u) => [billingOf(u), refundOf(u, 49), finalAnswer()]);
    await answerApproval(client, id, { decision: 'approve', operator: 'test' });
    await eventually('the refund planned', async () =>
      (await fx.rows({ workflow_id: id }))[0]?.state === 'planned' ? true : undefined,
    );
    const key = (await fx.rows({ workflow_id: id }))[0]!.idempotency_key;

    const cancelled = await runCli(drillEnv, ['cancel', id, '--wait', '60s']);
    assert.equal(cancelled.code, 0, cancelled.stdout + cancelled.stderr);
    assert.match(cancelled.stdout, new RegExp(`^${id} ended: CANCELLED \\(stop reason cancelled\\)$`, 'm'));
    const loud = new RegExp(
      `^  step 2: issue_refund USD 49\\.00 AMBIGUOUS \\(.+\\): money may have moved: check the refunds service for key ${escape(key)}$`,
      'm',
    );
    assert.match(cancelled.stdout, loud);
    assert.match(cancelled.stdout, /^WARNING: 1 effect\(s\) AMBIGUOUS/m);

    const result = await runCli(drillEnv, ['result', id]);
    assert.match(result.stdout, loud);
    const status = await runCli(drillEnv, ['status', id]);
    assert.match(status.stdout, loud);
    assert.match(
      await listed(id, ['--status', 'cancelled']),
      new RegExp(`^${id}\\s+CANCELLED\\s+cancelled\\s+cancelled\\s+.*\\s1 AMBIGUOUS\\s`, 'm'),
    );
    assert.equal((await handle.describe()).status.name, 'CANCELLED');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
