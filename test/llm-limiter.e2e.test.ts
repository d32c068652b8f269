// The fleet-wide LLM rate limit (docs/rate-limits.md) with real worker processes: the worker holding
// every lease is killed with SIGKILL mid-call; its leases expire after their TTL, the runs waiting
// behind them (and the killed worker's own runs, retried elsewhere) proceed, nothing deadlocks. The
// limiter is one workflow; `agent limits` reads it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { limiterQuery, limiterWorkflowId } from '../common/llm-limiter';
import type { LimiterSnapshot } from '../common/rate-limit';
import { runResult } from '../client/agent-client';
import { final } from '../scripts/scripted-replies';
import { agentFixture } from './helpers/agent-fixture';
import { eventually, uniqueId } from './helpers/harness';
import { runCli } from './helpers/cli';

// One limiter of this file's own: the scope is the model name the workers are given.
const MODEL = uniqueId('limiter-e2e-model');
// Long enough for a second worker to start and a new run to queue while the dead leases are held.
const TTL_SECONDS = 25;
const LIMITED = {
  OPENAI_MODEL: MODEL,
  AGENT_LLM_MAX_IN_FLIGHT: '2',
  AGENT_LLM_TPM: '1000000',
  AGENT_LLM_LEASE_TTL_SECONDS: String(TTL_SECONDS),
};

const fixture = agentFixture({ queue: 'limiter', worker: false });

async function limiterState(): Promise<LimiterSnapshot> {
  return fixture.client.workflow.getHandle(limiterWorkflowId(MODEL)).query(limiterQuery);
}

describe('LLM rate limiter', () => {
  it("SIGKILL of the worker holding every lease: the leases expire after their TTL, waiting runs proceed", async () => {
    const doomed = fixture.startWorker(LIMITED);
    await doomed.ready;
    const budget = { budget: { max_seconds: 180 } };

    // Two runs take both leases (2 in flight) and their LLM calls hang on the doomed worker.
    const holders = await Promise.all([
      fixture.start([{ hang: true }, final('first')], budget),
      fixture.start([{ hang: true }, final('second')], budget),
    ]);
    for (const { id } of holders) await fixture.llm.waitFor((r) => r.workflowId === id, 30_000);
    const held = await limiterState();
    assert.equal(held.in_use.leases, 2);
    assert.deepEqual(
      held.holders.map((h) => h.holder),
      [doomed.identity],
    );

    // A healthy worker joins, then the one holding the leases dies.
    const rescuer = fixture.startWorker(LIMITED);
    await rescuer.ready;
    await doomed.kill();

    // A new run on the healthy worker must wait: both leases are still held by the dead worker.
    const waiter = await fixture.start([final('third')], budget);
    const queued = await eventually('the new run to queue for a lease', async () => {
      const s = await limiterState();
      return s.queued.requests >= 1 && s.in_use.leases === 2 ? s : undefined;
    });
    assert.equal(fixture.llm.requests(waiter.id).length, 0, 'no call while the dead leases are held');
    assert.deepEqual(
      queued.holders.map((h) => h.holder),
      [doomed.identity],
    );

    // `agent limits` shows the same, from the limiter's query.
    const cli = await runCli(fixture.env, ['limits', MODEL, '-o', 'json']);
    assert.equal(cli.code, 0, cli.stderr);
    const [row] = JSON.parse(cli.stdout) as Array<{ scope: string; limits_state: LimiterSnapshot }>;
    assert.equal(row?.scope, MODEL);
    assert.equal(row?.limits_state.limits.max_in_flight, 2);
    assert.ok(row!.limits_state.queued.requests >= 1);

    // Every run ends with its answer: the two the killed worker held (retried on the rescuer) and the new one.
    const results = await Promise.all([...holders, waiter].map(({ handle }) => runResult(handle)));
    assert.deepEqual(
      results.map((r) => [r.stop_reason, r.answer]),
      [
        ['success', 'first'],
        ['success', 'second'],
        ['success', 'third'],
      ],
    );

    // The new run's call went out only after the dead leases had expired.
    const after = await limiterState();
    assert.ok(after.granted.expired >= 2, `expired ${after.granted.expired}`);
    const firstCall = fixture.llm.requests(waiter.id)[0]!;
    const deadLeasesGranted = Math.min(...holders.map(({ id }) => fixture.llm.requests(id)[0]!.receivedAt));
    assert.ok(
      firstCall.receivedAt >= deadLeasesGranted + TTL_SECONDS * 1000 - 1000,
      'the waiting run was granted when the dead leases expired, not before',
    );
    assert.equal(after.in_use.leases, 0, 'every lease of the finished runs was released');
    assert.equal(after.queued.requests, 0);
  });
});
