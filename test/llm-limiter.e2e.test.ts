// The fleet-wide LLM rate limit (docs/rate-limits.md) with real worker processes: the worker holding
// every lease is killed with SIGKILL mid-call; its leases expire after their TTL, the runs waiting
// behind them (and the killed worker's own runs, retried elsewhere) proceed, nothing deadlocks. The
// limiter is one workflow; `agent limits` reads it.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LIMITER_WORKFLOW_TYPE, limiterQuery, limiterWorkflowId } from '../common/llm-limiter';
import type { LimiterInput } from '../common/llm-limiter';
import type { LimiterSnapshot } from '../common/rate-limit';
import { runResult } from '../client/agent-client';
import { final, profile } from '../scripts/scripted-replies';
import type { Reply } from '../scripts/scripted-llm-server';
import { agentFixture } from './helpers/agent-fixture';
import { eventually, uniqueId } from './helpers/harness';
import { runCli } from './helpers/cli';

// One limiter of this file's own: the scope is the model name the workers are given.
const MODEL = uniqueId('limiter-e2e-model');
const CAN_MODEL = uniqueId('limiter-can-model');
// A worker refuses a model it cannot price (docs/cost.md): these made-up models get a price.
const PRICES_DIR = mkdtempSync(path.join(tmpdir(), 'limiter-prices-'));
const PRICES_FILE = path.join(PRICES_DIR, 'prices.json');
const PRICE = { input_usd_per_mtok: 0.4, output_usd_per_mtok: 1.6 };
writeFileSync(PRICES_FILE, JSON.stringify({ [MODEL]: PRICE, [CAN_MODEL]: PRICE }));
// Long enough for a new run to queue while the dead leases are held, on a loaded machine.
const TTL_SECONDS = 30;
const LIMITED = {
  OPENAI_MODEL: MODEL,
  AGENT_PRICES_FILE: PRICES_FILE,
  AGENT_LLM_MAX_IN_FLIGHT: '2',
  AGENT_LLM_TPM: '1000000',
  AGENT_LLM_LEASE_TTL_SECONDS: String(TTL_SECONDS),
};

const fixture = agentFixture({ queue: 'limiter', worker: false });

async function limiterState(model = MODEL): Promise<LimiterSnapshot> {
  return fixture.client.workflow.getHandle(limiterWorkflowId(model)).query(limiterQuery);
}

describe('LLM rate limiter', () => {
  after(() => rmSync(PRICES_DIR, { recursive: true, force: true }));
  it('SIGKILL of the worker holding every lease: the leases expire after their TTL, waiting runs proceed', async () => {
    const budget = { budget: { max_seconds: 180 } };
    // Two task queues, so the test decides which worker runs what: the doomed worker alone on the
    // fixture's queue, a healthy one on its own queue, which also serves the limiter workflow.
    const healthyQueue = fixture.queue('limiter-healthy');
    const limits = {
      tokens_per_minute: 1_000_000,
      requests_per_minute: 0,
      max_in_flight: 2,
      lease_ttl_ms: TTL_SECONDS * 1000,
    };
    await fixture.client.workflow.start(LIMITER_WORKFLOW_TYPE, {
      workflowId: limiterWorkflowId(MODEL),
      taskQueue: healthyQueue.taskQueue,
      args: [{ scope: MODEL, limits } satisfies LimiterInput],
    });
    const doomed = fixture.startWorker(LIMITED);
    const healthy = fixture.startWorker(LIMITED, healthyQueue);
    await Promise.all([doomed.ready, healthy.ready]);

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

    // A run on the healthy worker must wait: both leases are held.
    const waiter = await fixture.start([final('third')], budget, { on: healthyQueue });
    await eventually('the new run to queue for a lease', async () => {
      const s = await limiterState();
      return s.queued.requests >= 1 ? s : undefined;
    });

    // The worker holding both leases dies; a new worker takes over its queue (its runs retry there).
    await doomed.kill();
    const queued = await limiterState();
    assert.equal(fixture.llm.requests(waiter.id).length, 0, 'no call while the dead leases are held');
    assert.deepEqual(
      queued.holders.map((h) => h.holder),
      [doomed.identity],
    );
    fixture.startWorker(LIMITED);

    // `agent limits` shows the same, from the limiter's query.
    const cli = await runCli(fixture.env, ['limits', MODEL, '-o', 'json']);
    assert.equal(cli.code, 0, cli.stderr);
    const [row] = JSON.parse(cli.stdout) as Array<{ scope: string; limits_state: LimiterSnapshot }>;
    assert.equal(row?.scope, MODEL);
    assert.equal(row?.limits_state.limits.max_in_flight, 2);
    assert.ok(row!.limits_state.queued.requests >= 1);
    const none = await runCli(fixture.env, ['limits', 'no-such-model']);
    assert.equal(none.code, 1);
    assert.equal(none.stderr, 'agent: no rate limiter is running for no-such-model (see `agent limits`)\n');

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

  it('a 429 pauses the limiter and is absorbed in the same attempt; it continues as new, carrying its state', async () => {
    const model = CAN_MODEL;
    // A task queue of its own: the first test's worker (another model, another limiter) is not on it.
    const on = fixture.queue('limiter-can');
    // Started here with a tiny history budget; the workers' update-with-start joins it (USE_EXISTING).
    const limits = { tokens_per_minute: 0, requests_per_minute: 0, max_in_flight: 1, lease_ttl_ms: 60_000 };
    await fixture.client.workflow.start(LIMITER_WORKFLOW_TYPE, {
      workflowId: limiterWorkflowId(model),
      taskQueue: on.taskQueue,
      args: [{ scope: model, limits, continue_as_new_after_events: 40 } satisfies LimiterInput],
    });
    const worker = fixture.startWorker({ ...LIMITED, OPENAI_MODEL: model, AGENT_LLM_MAX_IN_FLIGHT: '1' }, on);
    await worker.ready;
    // Run a's first call is refused with 429: the limiter pauses for everyone, the call waits its
    // turn again inside the same activity attempt (Temporal's retries are not spent on it).
    const refused: Reply = { status: 429, headers: { 'retry-after': '1' } };
    const runs = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((name) =>
        fixture.start([...(name === 'a' ? [refused] : []), profile(), final(name)], {}, { on }),
      ),
    );
    const results = await Promise.all(runs.map(({ handle }) => runResult(handle)));
    assert.deepEqual(
      results.map((r) => r.answer),
      ['a', 'b', 'c', 'd', 'e'],
    );
    const state = await limiterState(model);
    assert.equal(state.granted.granted, 11, 'every call had a lease (10 decisions, 1 refused), across the chain');
    assert.equal(state.granted.released, 11);
    assert.equal(state.granted.pauses, 1);
    assert.equal(state.in_use.leases, 0);
    const attempts = ((await runs[0]!.handle.fetchHistory()).events ?? []).flatMap((e) =>
      e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt ?? 1] : [],
    );
    assert.deepEqual(attempts, [1, 1, 1], 'decide, tool, decide: each in its first attempt despite the 429');

    // The worker's own view, in its Prometheus metrics.
    const metricsUrl = /metrics=(http:\/\/\S+\/metrics)/.exec(worker.output())?.[1];
    assert.ok(metricsUrl, 'the worker printed its metrics address');
    const metrics = await (await fetch(metricsUrl)).text();
    assert.match(metrics, /^agent_llm_leases_granted_total 11$/m);
    assert.match(metrics, /^agent_llm_limiter_pauses_total 1$/m);
    assert.match(metrics, /^agent_llm_leases_queued 0$/m);
    assert.match(metrics, /^agent_llm_lease_wait_seconds_count 11$/m);
    const chain: string[] = [];
    for await (const wf of fixture.client.workflow.list({ query: `WorkflowId = '${limiterWorkflowId(model)}'` }))
      chain.push(wf.runId);
    assert.ok(chain.length >= 2, `the limiter continued as new (${chain.length} runs)`);
  });
});
