// The fleet-wide LLM rate limit (docs/rate-limits.md) with real worker processes: the worker holding
// every lease is killed with SIGKILL mid-call; its leases expire after their TTL, the runs waiting
// behind them (and the killed worker's own runs, retried elsewhere) proceed, nothing deadlocks. The
// limiter is one workflow; `agent limits` reads it. It continues as new with a small, bounded state
// and its runs' short workflow task timeout; terminated under waiting runs, it ends them clearly.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import {
  acquireUpdate,
  LIMITER_UNAVAILABLE,
  LIMITER_WORKFLOW_TYPE,
  limiterQuery,
  limiterWorkflowId,
  releaseSignal,
} from '../../common/limiter/llm-limiter';
import type { LimiterInput } from '../../common/limiter/llm-limiter';
import { connectLimiter, LlmLimiter } from '../../activities/limiter/llm-lease';
import { Worker } from '@temporalio/worker';
import { NO_METRICS_SINKS } from '../../worker/metrics';
import { workflowCode } from '../../worker/workflow-bundle';
import type { LimiterSnapshot } from '../../common/limiter/rate-limit';
import { runResult } from '../../client/agent-client';
import { final, profile } from '../../offline-model/scripted-replies';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually, uniqueId } from '../helpers/harness';
import { runCli } from '../helpers/cli';

// One limiter of this file's own: the scope is the model name the workers are given.
const MODEL = uniqueId('limiter-e2e-model');
const CAN_MODEL = uniqueId('limiter-can-model');
const TERMINATE_MODEL = uniqueId('limiter-terminate-model');
const SIZE_MODEL = uniqueId('limiter-size-model');
const CLOSING_MODEL = uniqueId('limiter-closing-model');
// A worker refuses a model it cannot price (docs/cost.md): these made-up models get a price.
const PRICES_DIR = mkdtempSync(path.join(tmpdir(), 'limiter-prices-'));
const PRICES_FILE = path.join(PRICES_DIR, 'prices.json');
const PRICE = { input_usd_per_mtok: 0.4, output_usd_per_mtok: 1.6 };
writeFileSync(
  PRICES_FILE,
  JSON.stringify({
    [MODEL]: PRICE,
    [CAN_MODEL]: PRICE,
    [TERMINATE_MODEL]: PRICE,
    [SIZE_MODEL]: PRICE,
    [CLOSING_MODEL]: PRICE,
  }),
);
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
const exec = promisify(execFile);

/** Temporal's own CLI against the test server. */
function temporalCli(args: string[]) {
  const cli = process.env.TEMPORAL_CLI_PATH;
  assert.ok(cli, 'TEMPORAL_CLI_PATH is set by `npm test`');
  return exec(cli, [...args, '--address', fixture.env.address, '--namespace', fixture.env.namespace]);
}

/** The workflow task timeout a workflow run was given, in seconds. */
async function taskTimeoutSeconds(workflowId: string, runId?: string): Promise<number> {
  const { raw } = await fixture.client.workflow.getHandle(workflowId, runId).describe();
  return Number(raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds ?? 0);
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const eventsOf = async (workflowId: string, runId?: string): Promise<HistoryEvent[]> =>
  (await fixture.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];

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
    // The profile read between them is a local activity (a marker, no ActivityTaskStarted).
    assert.deepEqual(attempts, [1, 1], 'decide, decide: each in its first attempt despite the 429');

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
    // Its new runs keep the runs' short workflow task timeout (4 s), not Temporal's default 10 s.
    assert.equal(await taskTimeoutSeconds(limiterWorkflowId(model)), 4);
  });

  it("started by a decision, the limiter has the runs' 4 s task timeout; continue-as-new carries a small state whatever the traffic", async () => {
    const on = fixture.queue('limiter-size');
    const worker = fixture.startWorker({ ...LIMITED, OPENAI_MODEL: SIZE_MODEL }, on);
    await worker.ready;
    const run = await fixture.run([final('ok')], {}, { on });
    assert.equal(run.result.stop_reason, 'success');
    assert.equal(await taskTimeoutSeconds(limiterWorkflowId(SIZE_MODEL)), 4);

    // A limiter of its own with a small history budget, driven with Updates and Signals as fast as
    // this machine allows: ids of 64 characters, holders of 300 (cut to 64).
    const scope = `${SIZE_MODEL}-driven`;
    const workflowId = limiterWorkflowId(scope);
    const limits = { tokens_per_minute: 0, requests_per_minute: 0, max_in_flight: 0, lease_ttl_ms: 60_000 };
    const handle = await fixture.client.workflow.start(LIMITER_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: on.taskQueue,
      args: [{ scope, limits, continue_as_new_after_events: 300 } satisfies LimiterInput],
    });
    const holder = 'h'.repeat(300);
    let n = 0;
    const latest = fixture.client.workflow.getHandle(workflowId);
    const pair = async () => {
      const id = `${n++}-`.padEnd(64, 'x');
      // An Update that meets the moment of continue-as-new is aborted by the server: asked again
      // (same id, so answered once), as the decide activity does.
      for (let tries = 1; ; tries++) {
        try {
          const answer = await latest.executeUpdate(acquireUpdate, { args: [{ id, holder, tokens: 900, limits }] });
          assert.ok(answer.granted, JSON.stringify(answer));
          break;
        } catch (err) {
          if (tries >= 10) throw err;
        }
      }
      await latest.signal(releaseSignal, { lease_id: id, used_tokens: 400 });
    };
    // What each continue-as-new carried, as the server stored it, run after run.
    const carried = async (): Promise<number[]> => {
      const sizes: number[] = [];
      let runId: string | undefined = handle.firstExecutionRunId;
      while (runId) {
        const events = await eventsOf(workflowId, runId);
        const attrs = events.find(
          (e) => e.workflowExecutionContinuedAsNewEventAttributes,
        )?.workflowExecutionContinuedAsNewEventAttributes;
        if (!attrs) break;
        sizes.push((attrs.input?.payloads ?? []).reduce((b, p) => b + (p.data?.length ?? 0), 0));
        runId = attrs.newExecutionRunId ?? undefined;
      }
      return sizes;
    };
    while ((await carried()).length < 2) await Promise.all(Array.from({ length: 6 }, () => pair()));
    const sizes = await carried();
    const state = await latest.query(limiterQuery);
    console.log(
      `limiter: ${n} leases; continue-as-new inputs of ${sizes.join(', ')} bytes; ${state.carried_chars} now`,
    );
    // No lease is open and nobody waits: what is carried is the window's counters and statistics,
    // while every lease of this minute still counts.
    for (const size of sizes) assert.ok(size < 8_000, `a continue-as-new input of ${size} bytes`);
    assert.equal(state.window.requests, n);
    assert.equal(state.in_use.leases, 0);
    assert.equal(await taskTimeoutSeconds(workflowId), 4, 'its continued runs have the 4 s task timeout too');
    // Its first run (bounded path, continue-as-new) replays on the same code.
    await Worker.runReplayHistory(
      { ...workflowCode(undefined).options, sinks: NO_METRICS_SINKS },
      await fixture.client.workflow.getHandle(workflowId, handle.firstExecutionRunId).fetchHistory(),
      workflowId,
    );
  });

  it("a lease asked as the limiter continues as new is granted by the next run at once, not after the SDK's 1 s backoff", async () => {
    // The activities' own connection (connectLimiter), as a worker's decide activity uses it, against
    // a limiter of its own that continues as new every 40 events, driven by 6 holders at once: an
    // acquire (an update-with-start) that meets the closing run hears RESOURCE_EXHAUSTED "Update-with-
    // Start could not be executed", "workflow is closing" inside; the SDK's retries waited 1.4 s and
    // more before asking again (slowest leases 1.9-2.6 s), the closing-aware ones 50 ms (0.5 s).
    const on = fixture.queue('limiter-closing');
    const worker = fixture.startWorker({ ...LIMITED, OPENAI_MODEL: CLOSING_MODEL }, on);
    await worker.ready;
    const scope = `${CLOSING_MODEL}-driven`;
    const workflowId = limiterWorkflowId(scope);
    const limits = { tokens_per_minute: 0, requests_per_minute: 0, max_in_flight: 0, lease_ttl_ms: 60_000 };
    await fixture.client.workflow.start(LIMITER_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: on.taskQueue,
      args: [{ scope, limits, continue_as_new_after_events: 40 } satisfies LimiterInput],
    });
    const { limiter, close } = await connectLimiter(on, { scope, limits, taskQueue: on.taskQueue });
    const waits: number[] = [];
    const runsOfChain = async () => {
      let runs = 0;
      for await (const _ of fixture.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs++;
      return runs;
    };
    try {
      const holder = async () => {
        const started = Date.now();
        await limiter.run({
          tokens: 100,
          signal: AbortSignal.timeout(30_000),
          call: async () => (waits.push(Date.now() - started), 'ok'),
          usedTokens: () => 50,
          rateLimited: () => undefined,
        });
      };
      while ((await runsOfChain()) < 8) await Promise.all(Array.from({ length: 6 }, holder));
    } finally {
      await close();
    }
    waits.sort((a, b) => a - b);
    const slowest = waits.slice(-3);
    console.log(
      `limiter closing: ${waits.length} leases over ${await runsOfChain()} runs; slowest ${slowest.join(', ')} ms`,
    );
    // The SDK's first retry of a RESOURCE_EXHAUSTED comes 1.36 s at the earliest (1.7 s, jitter 0.8):
    // a lease slower than that is one the closing run's answer held.
    assert.ok(slowest.at(-1)! < 1_350, `a lease took ${slowest.at(-1)} ms: the closing run's answer was retried late`);
  });

  it('terminated under waiting runs: they end llm_error within seconds; the next decision starts a fresh limiter', async () => {
    const on = fixture.queue('limiter-terminate');
    const env = { ...LIMITED, OPENAI_MODEL: TERMINATE_MODEL, AGENT_LLM_MAX_IN_FLIGHT: '1' };
    const worker = fixture.startWorker(env, on);
    await worker.ready;
    const workflowId = limiterWorkflowId(TERMINATE_MODEL);
    // Run a holds the only lease (its call hangs); b and c wait for it at the limiter.
    const holder = await fixture.start([{ hang: true }], { budget: { max_seconds: 300 } }, { on });
    await fixture.llm.waitFor((r) => r.workflowId === holder.id, 30_000);
    const waiting = [await fixture.start([final('b')], {}, { on }), await fixture.start([final('c')], {}, { on })];
    await eventually('two decisions waiting at the limiter', async () => {
      const s = await limiterState(TERMINATE_MODEL);
      return s.queued.requests === 2 ? s : undefined;
    });

    const terminatedAt = Date.now();
    await temporalCli([
      'workflow',
      'terminate',
      '--workflow-id',
      workflowId,
      '--reason',
      'operator reset of the limiter',
    ]);
    for (const run of waiting) {
      const result = await runResult(run.handle);
      const endedMs = Date.now() - terminatedAt;
      assert.equal(result.stop_reason, 'llm_error', run.id);
      console.log(`limiter terminated: ${run.id} ended ${result.stop_reason} after ${endedMs} ms`);
      assert.ok(endedMs < 30_000, `${run.id} ended ${endedMs} ms after the terminate`);
      // One decide attempt, failed for good with the limiter's own error type and a message that says why.
      const failed = (await run.handle.fetchHistory()).events?.filter((e) => e.activityTaskFailedEventAttributes);
      assert.equal(failed?.length, 1);
      const failure = failed![0]!.activityTaskFailedEventAttributes!.failure!;
      assert.equal(failure.applicationFailureInfo?.type, LIMITER_UNAVAILABLE);
      assert.equal(failure.applicationFailureInfo?.nonRetryable, true);
      assert.match(failure.message ?? '', /LLM rate limiter llm-limiter:.* ended \(terminated, reset or failed\)/);
      assert.equal(fixture.llm.requests(run.id).length, 0, 'no LLM call went out without a lease');
    }
    // The stated fallback: the next decision starts a fresh limiter (which knows nothing of run a's lease).
    const next = await fixture.run([final('d')], {}, { on });
    assert.equal(next.result.stop_reason, 'success');
    assert.equal((await fixture.client.workflow.getHandle(workflowId).describe()).status.name, 'RUNNING');
    await holder.handle.cancel();
    assert.equal((await runResult(holder.handle)).stop_reason, 'cancelled');
  });

  it('a limiter nobody runs (no worker polls its queue): the wait fails after the silence allowed, not the 5-minute backstop', async () => {
    const scope = uniqueId('limiter-silent');
    const limits = { tokens_per_minute: 0, requests_per_minute: 0, max_in_flight: 1, lease_ttl_ms: 60_000 };
    await fixture.client.workflow.start(LIMITER_WORKFLOW_TYPE, {
      workflowId: limiterWorkflowId(scope),
      taskQueue: uniqueId('limiter-nobody-polls'),
      args: [{ scope, limits } satisfies LimiterInput],
    });
    const limiter = new LlmLimiter(fixture.client, { scope, limits, taskQueue: 'unused', silenceMs: 3000 });
    const cancel = new AbortController();
    const started = Date.now();
    const outcome = await Promise.race([
      limiter.acquire(100, cancel.signal).then(
        () => 'granted',
        (err: unknown) => err,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting after 60 s'), 60_000)),
    ]);
    cancel.abort();
    assert.ok(outcome instanceof ApplicationFailure, String(outcome));
    assert.equal(outcome.type, LIMITER_UNAVAILABLE);
    assert.equal(outcome.nonRetryable, false, 'a silent limiter may answer again: the next attempt asks');
    assert.match(outcome.message, /^LLM rate limiter llm-limiter:limiter-silent-\S+: it has not answered for 3 s$/);
    assert.ok(Date.now() - started < 20_000, `failed after ${Date.now() - started} ms`);
  });
});
