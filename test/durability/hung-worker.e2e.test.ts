// A hung worker costs a run one timeout, not several: three real worker processes on one queue,
// five runs of the refund scenario started at once, and while their search_policy calls run the
// busiest worker is stopped (SIGSTOP: its sockets stay open, so the server keeps handing its open
// polls tasks it never answers). Every run must succeed, and the round must end within the healthy
// round's time plus one timeout's worth (docs/runtime-semantics.md#a-hung-worker has the timeouts
// that decide it). The figures are printed as diagnostics.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runResult, startRun } from '../../client/agent-client';
import type { AgentResult } from '../../common/types';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { agentFixture } from '../helpers/agent-fixture';
import { historyOf, retriedAttempts, waitStarted, workflowTaskTimeouts } from '../helpers/fault-matrix';
import { agentInput, uniqueId } from '../helpers/harness';
import { finalAnswer, tool } from '../helpers/refund-fixtures';
import { byStep } from '../../offline-model/scripted-replies';
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

async function round(stop?: (runningOn: string[]) => void): Promise<Round> {
  const startedAt = Date.now();
  const handles = await Promise.all(
    Array.from({ length: RUNS }, () => {
      const id = uniqueId('hung');
      fixture.llm.script(
        id,
        byStep({
          1: tool('get_user_profile', { user_id: 42 }),
          2: tool('search_policy', { query: 'refund window' }),
          3: finalAnswer('done'),
        }),
      );
      return startRun(fixture.client, fixture.env, agentInput({ budget: { max_steps: 3, max_seconds: 120 } }), id);
    }),
  );
  if (stop) stop(await Promise.all(handles.map(async (h) => (await waitStarted(h, 'search_policy')).identity)));
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

describe('a hung worker among three', () => {
  const fleet: WorkerProcess[] = [];
  before(async () => {
    for (let i = 0; i < WORKERS; i++)
      fleet.push(
        fixture.startWorker({ AGENT_TOOL_PAUSE_MS: String(TOOL_PAUSE_MS), AGENT_TOOL_PAUSE_TOOLS: 'search_policy' }),
      );
    await Promise.all(fleet.map((w) => w.ready));
    await round(); // warm-up: a fresh worker's first workflow tasks take seconds
  });
  after(() => Promise.all(fleet.map((w) => w.kill())));

  it('five runs started at once, the busiest worker stopped mid-run: all succeed, the hang costs one timeout', async (t) => {
    const healthy = await round();
    let stoppedCalls = 0;
    let stopped: WorkerProcess | undefined;
    const hung = await round((runningOn) => {
      const count = (w: WorkerProcess) => runningOn.filter((id) => id === w.identity).length;
      const busiest = [...fleet].sort((a, b) => count(b) - count(a))[0]!;
      stoppedCalls = count(busiest);
      stopped = busiest;
      busiest.hang();
    });
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
});
