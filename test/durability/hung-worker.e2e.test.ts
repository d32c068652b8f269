// A hung worker costs a run one timeout, not several: three real worker processes on one queue,
// five runs of the refund scenario started at once, and while their search_policy calls run the
// busiest worker is stopped (SIGSTOP: its sockets stay open, so the server keeps handing its open
// polls tasks it never answers). Every run must succeed, and the round must end within the healthy
// round's time plus one timeout's worth (docs/runtime-semantics.md#a-hung-worker has the timeouts
// that decide it). The figures are printed as diagnostics.
// The same, for a read-only tool run as a local activity: it runs inside the workflow task of the
// worker that holds the run, so a hung worker takes the whole task with it; the task times out (2 s)
// and a healthy worker runs the read again, under the same idempotency key.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runResult, startRun } from '../../client/agent-client';
import type { AgentResult } from '../../common/types';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { agentFixture } from '../helpers/agent-fixture';
import { historyOf, retriedAttempts, waitStarted, workflowTaskTimeouts } from '../helpers/fault-matrix';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { payloadDecoder } from '../../client/history/fetch-chain';
import { LOCAL_ACTIVITY_MARKER, localCallOf } from '../../common/temporal/local-call';
import { finalAnswer, tool } from '../helpers/refund-fixtures';
import { byStep } from '../../offline-model/scripted-replies';
import type { StepReply } from '../../offline-model/scripted-replies';
import type { WorkflowHandle } from '@temporalio/client';
import { ACTIVITY_POLLS } from '../../worker/create-worker';

const WORKERS = 3;
const RUNS = 5;
/** search_policy's first attempt runs this long, so the stop lands while the calls are in flight. */
const TOOL_PAUSE_MS = 3_000;
/**
 * What a hung worker may add to the round: the dead attempt's heartbeat timeout (2 s) and the run's
 * next workflow task on its sticky poll (2 s), less the tool's pause the retry skips, plus 4 s for
 * the load of a shared 2-core machine. Each further retry or workflow task the hung worker's open
 * polls swallow costs another 2-3 s: three of them (as with the SDK's 10 activity polls and a 4 s
 * workflow task timeout, up to 20 s) miss it.
 */
const ONE_TIMEOUT_BOUND_MS = 8_000;
/** The goal for the whole round (five runs, one of three workers hung). */
const GOAL_MS = 12_000;

const fixture = agentFixture({ queue: 'hung-worker', worker: false });

/** The activity polls the worker's SDK holds open (its Prometheus endpoint, named in its ready line). */
async function activityPollers(worker: WorkerProcess): Promise<number> {
  const url =
    /metrics=(http:\/\/[^ ;]+)/.exec(worker.output())?.[1] ??
    assert.fail(`worker ${worker.identity} serves no metrics`);
  const line = (await (await fetch(url)).text())
    .split('\n')
    .find((l) => l.startsWith('temporal_num_pollers{') && l.includes('poller_type="activity_task"'));
  return Number(line?.split(' ').at(-1) ?? NaN);
}

interface Round {
  wallMs: number;
  runs: Array<{ id: string; result: AgentResult; ms: number; retried: string[]; tasksTimedOut: number }>;
}

/** What a round's runs do, and how to tell which worker runs a run's paused call. */
interface Scenario {
  steps: Record<number, StepReply>;
  runningOn: (handle: WorkflowHandle) => Promise<string>;
}

/** profile (local) → search_policy (a normal activity, paused) → final. */
const SEARCH: Scenario = {
  steps: {
    1: tool('get_user_profile', { user_id: 42 }),
    2: tool('search_policy', { query: 'refund window' }),
    3: finalAnswer('done'),
  },
  runningOn: async (h) => (await waitStarted(h, 'search_policy')).identity,
};

/** The key of a run's local billing read, as the worker running it logs it (activities/tools/drill.ts). */
const billingKeyRe = (workflowId: string) => new RegExp(`${workflowId}:1:get_user_billing:[0-9a-f]+`);

/** get_user_billing (a local activity, paused) → final. A local call has no event until it ends: the log says where it runs. */
const LOCAL_READ: Scenario = {
  steps: { 1: tool('get_user_billing', { user_id: 42 }), 2: finalAnswer('done') },
  runningOn: (h) =>
    eventually(
      `${h.workflowId}'s billing read under way`,
      () => fleet.find((w) => billingKeyRe(h.workflowId).test(w.output()))?.identity,
    ),
};

const fleet: WorkerProcess[] = [];
/** Workers a test stopped: replaced before the next one. */
const hungBefore = new Set<WorkerProcess>();

async function round(scenario: Scenario, stop?: (runningOn: string[]) => void): Promise<Round> {
  const startedAt = Date.now();
  const steps = Object.keys(scenario.steps).length;
  const handles = await Promise.all(
    Array.from({ length: RUNS }, () => {
      const id = uniqueId('hung');
      fixture.llm.script(id, byStep(scenario.steps));
      return startRun(fixture.client, fixture.env, agentInput({ budget: { max_steps: steps, max_seconds: 120 } }), id);
    }),
  );
  if (stop) stop(await Promise.all(handles.map(scenario.runningOn)));
  const runs = await Promise.all(
    handles.map(async (h) => {
      const result = await runResult(h);
      const ms = Date.now() - startedAt;
      const events = await historyOf(h);
      return {
        id: h.workflowId,
        result,
        ms,
        retried: retriedAttempts(events).map((a) => `${a.activity}#${a.attempt} after ${a.before}`),
        tasksTimedOut: workflowTaskTimeouts(events).length,
      };
    }),
  );
  return { wallMs: Math.max(...runs.map((r) => r.ms)), runs };
}

const describeRound = (r: Round): string =>
  `${r.wallMs} ms | ` +
  r.runs
    .map(
      (x) =>
        `${x.result.stop_reason} ${x.ms} ms` +
        (x.retried.length ? `, retried ${x.retried.join(' ')}` : '') +
        (x.tasksTimedOut ? `, ${x.tasksTimedOut} workflow task(s) timed out` : ''),
    )
    .join(' | ');

/** Stops the worker running the most of the round's paused calls; says which, and how many calls. */
function stopBusiest(into: { worker?: WorkerProcess; calls: number }) {
  return (runningOn: string[]) => {
    const count = (w: WorkerProcess) => runningOn.filter((id) => id === w.identity).length;
    const busiest = [...fleet].sort((a, b) => count(b) - count(a))[0]!;
    into.calls = count(busiest);
    into.worker = busiest;
    busiest.hang();
  };
}

describe('a hung worker among three', () => {
  before(async () => {
    for (let i = 0; i < WORKERS; i++)
      fleet.push(
        fixture.startWorker({
          AGENT_TOOL_PAUSE_MS: String(TOOL_PAUSE_MS),
          AGENT_TOOL_PAUSE_TOOLS: 'search_policy,get_user_billing',
        }),
      );
    await Promise.all(fleet.map((w) => w.ready));
    await round(SEARCH); // warm-up: a fresh worker's first workflow tasks take seconds
  });
  after(() => Promise.all(fleet.map((w) => w.kill())));

  it('five runs started at once, the busiest worker stopped mid-run: all succeed, the hang costs one timeout', async (t) => {
    const healthy = await round(SEARCH);
    const hit: { worker?: WorkerProcess; calls: number } = { calls: 0 };
    const hung = await round(SEARCH, stopBusiest(hit));
    const { worker: stopped, calls: stoppedCalls } = hit;
    if (stopped) hungBefore.add(stopped);
    t.diagnostic(`healthy round: ${describeRound(healthy)}`);
    t.diagnostic(`hung round (${stoppedCalls} of ${RUNS} calls on the stopped worker): ${describeRound(hung)}`);
    t.diagnostic(
      `hung round ${hung.wallMs} ms against the goal of ${GOAL_MS} ms; added ${hung.wallMs - healthy.wallMs} ms`,
    );

    assert.deepEqual(
      hung.runs.filter((r) => r.result.stop_reason !== 'success').map((r) => `${r.id}: ${r.result.stop_reason}`),
      [],
      'runs that did not succeed',
    );
    for (const r of hung.runs)
      assert.deepEqual(
        r.result.trace.map((e) => e.tool),
        ['get_user_profile', 'search_policy', 'final'],
      );
    // What bounds the cost: each worker holds one activity poll, so the hung one swallowed one retry
    // at most (with the SDK's default of 10, a run's retries landed on it up to 7 times in a row).
    const healthyWorkers = fleet.filter((w) => w !== stopped);
    for (const w of healthyWorkers)
      assert.equal(await activityPollers(w), ACTIVITY_POLLS, `${w.identity}'s activity polls`);
    // The fault hit: calls were running on the worker that stopped, and were retried elsewhere.
    assert.ok(stoppedCalls > 0, 'search_policy calls in flight on the stopped worker');
    assert.ok(
      hung.runs.some((r) => r.retried.some((a) => a.startsWith('search_policy'))),
      'a search_policy attempt died with its worker and was retried',
    );
    assert.ok(
      hung.wallMs <= healthy.wallMs + ONE_TIMEOUT_BOUND_MS,
      `the hung round took ${hung.wallMs} ms, the healthy one ${healthy.wallMs} ms: more than one timeout (${ONE_TIMEOUT_BOUND_MS} ms) added`,
    );
  });

  it('five runs, the worker running their local reads stopped: the reads run again elsewhere under the same keys', async (t) => {
    // A fresh fleet of three: the worker the test above stopped is replaced.
    for (const [i, w] of fleet.entries()) {
      if (w.proc.signalCode === null && w.proc.exitCode === null && !hungBefore.has(w)) continue;
      await w.kill();
      fleet[i] = fixture.startWorker({
        AGENT_TOOL_PAUSE_MS: String(TOOL_PAUSE_MS),
        AGENT_TOOL_PAUSE_TOOLS: 'search_policy,get_user_billing',
      });
    }
    await Promise.all(fleet.map((w) => w.ready));
    await round(LOCAL_READ); // warm-up of the new worker
    const healthy = await round(LOCAL_READ);
    const hit: { worker?: WorkerProcess; calls: number } = { calls: 0 };
    const hung = await round(LOCAL_READ, (runningOn) => {
      stopBusiest(hit)(runningOn);
      hungBefore.add(hit.worker!);
    });
    const stopped = hit.worker!;
    t.diagnostic(`healthy round: ${describeRound(healthy)}`);
    t.diagnostic(`hung round (${hit.calls} of ${RUNS} local reads on the stopped worker): ${describeRound(hung)}`);
    t.diagnostic(`hung round ${hung.wallMs} ms; added ${hung.wallMs - healthy.wallMs} ms`);

    assert.deepEqual(
      hung.runs.filter((r) => r.result.stop_reason !== 'success').map((r) => `${r.id}: ${r.result.stop_reason}`),
      [],
      'runs that did not succeed',
    );
    assert.ok(hit.calls > 0, 'local reads in flight on the stopped worker');
    const decode = payloadDecoder(fixture.client);
    let moved = 0;
    for (const r of hung.runs) {
      assert.deepEqual(
        r.result.trace.map((e) => e.tool),
        ['get_user_billing', 'final'],
      );
      const events = await historyOf(fixture.client.workflow.getHandle(r.id));
      const markers = events.filter((e) => e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER);
      assert.equal(markers.length, 1, `${r.id}: the read is recorded once`);
      const marker = markers[0]!.markerRecordedEventAttributes!;
      const task = events.find((e) => e.eventId?.toString() === marker.workflowTaskCompletedEventId?.toString());
      const recordedBy = task?.workflowTaskCompletedEventAttributes?.identity;
      assert.notEqual(recordedBy, stopped.identity, `${r.id}: recorded by the stopped worker`);
      // The stopped worker logged the reads it had under way, and nothing after (it is stopped).
      const inFlight = billingKeyRe(r.id).exec(stopped.output())?.[0];
      if (!inFlight) continue;
      // This run's read was under way on the stopped worker: its task timed out, and the read that
      // counts ran on a healthy worker under the key the stopped one used.
      moved++;
      assert.ok(r.tasksTimedOut > 0, `${r.id}: the stopped worker's workflow task timed out`);
      const echo = localCallOf(await decode(marker.details?.result?.payloads));
      assert.equal(echo?.idempotency_key, inFlight, `${r.id}: the key of the read that counts`);
    }
    assert.equal(moved, hit.calls, 'every read the stopped worker held ran again elsewhere');
    // What a hung worker costs a run whose local read it held: its workflow task's timeout (2 s) and
    // the read again (3 s here), and each later task of the run its open polls swallow, 2 s more.
    assert.ok(
      hung.wallMs <= healthy.wallMs + ONE_TIMEOUT_BOUND_MS,
      `the hung round took ${hung.wallMs} ms, the healthy one ${healthy.wallMs} ms: more than one timeout (${ONE_TIMEOUT_BOUND_MS} ms) added`,
    );
  });
});
