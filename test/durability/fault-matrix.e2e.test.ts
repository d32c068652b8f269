// The fault matrix: every phase a run can be in × every fault an operator's kill switch
// and the runtime's guarantees exist for, on the real dev server, with real worker processes, the
// real openai client against the scripted model, and the real SQLite refunds service. Each cell
// asserts the stop reason, the result's effects list against the refunds database, and, for a
// cancel, that nothing happened after it; cells with a hung worker also assert how soon the run
// closed. One more cell has no cancel at all: a worker hung among healthy ones, where every run must
// still succeed. docs/faults.md has the table, the expected outcome of every cell and why each fault
// is applied the way it is.
//
// Cells run concurrently, in groups that share their workers and, where the fault allows, the
// fault itself (one SIGKILL, one server restart, one SIGSTOP for several runs).
import { after, before, describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { startDevServer } from '../../local-servers/dev-server';
import type { DevServer } from '../../local-servers/dev-server';
import { freePort } from '../../local-servers/free-port';
import { cancelRun, runResult, startRun } from '../../client/agent-client';
import { answerApproval, pendingApproval } from '../../client/approvals';
import type { TemporalEnv } from '../../runtime/temporal-env';
import type { reactAgent } from '../../workflows/agent/agent';
import type { AgentResult, EffectOutcome } from '../../common/types';
import type { StopReason } from '../../common/stop-reasons';
import { agentInput, connectClient, eventually, testEnv, uniqueId } from '../helpers/harness';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { runCli } from '../helpers/cli';
import { agentFixture } from '../helpers/agent-fixture';
import { billingOf, finalAnswer, REFUND_ALLOW, refundGoal, refundOf, tool } from '../helpers/refund-fixtures';
import {
  activitiesDrained,
  afterCut,
  assertEffectsMatchDb,
  assertNothingAfter,
  Barrier,
  budgetDeadlineMs,
  budgetTimerFired,
  byStep,
  closedAtMs,
  eventTimeMs,
  gate,
  historyOf,
  llmRequest,
  median,
  retriedAttempts,
  startedActivity,
  timeline,
  untilWallClock,
  waitStarted,
  workflowTaskTimeouts,
} from '../helpers/fault-matrix';
import type { Gate, RetriedAttempt, StepReply, WorkflowTaskTimeout } from '../helpers/fault-matrix';

// ---- the matrix -------------------------------------------------------------------------------

const PHASES = [
  'deciding',
  'read-only tool',
  'effect before commit',
  'effect after commit',
  'awaiting approval',
  'continue-as-new boundary',
] as const;
type Phase = (typeof PHASES)[number];
type Fault =
  | 'operator cancel'
  | 'max_seconds deadline'
  | 'worker SIGKILL + new worker'
  | 'worker hung + cancel'
  | 'server SIGKILL + restart';

/**
 * The stated bound for a cancel or a deadline with a hung worker: the heartbeat timeout (2 s), up to
 * three workflow tasks lost to the hung worker's open polls (3 x 4 s: startRun's workflow task timeout
 * was 4 s when this was measured, 2 s now), and 6 s for the reconcile and the machine's load.
 */
const HUNG_BOUND_MS = (2 + 3 * 4 + 6) * 1000;
/** search_policy's first attempt waits this long (AGENT_TOOL_PAUSE_MS), under its 10 s start-to-close. */
const TOOL_PAUSE_MS = 8_000;
/** A refund's first attempt stalls this long without heartbeats (AGENT_REFUND_PAUSE_*_COMMIT_MS). */
const REFUND_STALL_MS = 15_000;
/** Fresh runs a deadline cell may take to land its deadline inside the stalled attempt's heartbeat window. */
const DEADLINE_TRIES = 3;
const CELL_TIMEOUT_MS = 300_000;
/** continue-as-new × deadline: the step before the boundary takes this long, so the chain is older than its latest run. */
const CAN_SLOW_MS = 4_000;
const REASON = 'fault matrix: operator pulls the kill switch';

interface Expected {
  stop: StopReason;
  effects: EffectOutcome[];
  /** Tools of the trace, in order. */
  trace: string[];
}

const BILLING = 'get_user_billing';
const PRE_BOUNDARY = ['get_user_profile', BILLING];
const ok = (trace: string[], effects: EffectOutcome[] = []): Expected => ({ stop: 'success', effects, trace });
const cut = (stop: StopReason, trace: string[], effects: EffectOutcome[] = []): Expected => ({ stop, effects, trace });

/**
 * A phase's row: every cut (a cancel, the deadline) ends the run with `cutTrace` and `cutEffects`,
 * every recovery (a new worker, the restarted server) completes it with `okTrace` and `okEffects`.
 */
function row(
  cutTrace: string[],
  okTrace: string[],
  cutEffects: EffectOutcome[] = [],
  okEffects: EffectOutcome[] = [],
): Record<Fault, Expected> {
  return {
    'operator cancel': cut('cancelled', cutTrace, cutEffects),
    'max_seconds deadline': cut('max_seconds', cutTrace, cutEffects),
    'worker SIGKILL + new worker': ok(okTrace, okEffects),
    'worker hung + cancel': cut('cancelled', cutTrace, cutEffects),
    'server SIGKILL + restart': ok(okTrace, okEffects),
  };
}
const REFUNDED = [BILLING, 'issue_refund'];

/** Every cell's expected outcome (docs/faults.md is the same table in prose). */
const EXPECTED: Record<Phase, Record<Fault, Expected>> = {
  deciding: row([], []),
  'read-only tool': row([], ['search_policy']),
  'effect before commit': row([BILLING], REFUNDED, ['not_made'], ['confirmed']),
  'effect after commit': row([BILLING], REFUNDED, ['confirmed'], ['confirmed']),
  'awaiting approval': {
    ...row([BILLING], REFUNDED, [], ['confirmed']),
    // Time waiting for a person is not the agent's: the deadline passes, the run still waits.
    'max_seconds deadline': ok(REFUNDED, ['confirmed']),
  },
  'continue-as-new boundary': row(PRE_BOUNDARY, PRE_BOUNDARY),
};

/** The activity in flight when the fault lands (none while a person is awaited). */
const IN_FLIGHT: Record<Phase, string | undefined> = {
  deciding: 'decide',
  'read-only tool': 'search_policy',
  'effect before commit': 'issue_refund',
  'effect after commit': 'issue_refund',
  'awaiting approval': undefined,
  'continue-as-new boundary': 'decide',
};

// ---- workers ----------------------------------------------------------------------------------

/** Which drill knobs a phase's worker needs: plain workers make search_policy slow; refund workers stall a refund. */
type Config = 'plain' | 'before' | 'after';
const CONFIG_OF: Record<Phase, Config> = {
  deciding: 'plain',
  'read-only tool': 'plain',
  'effect before commit': 'before',
  'effect after commit': 'after',
  'awaiting approval': 'plain',
  'continue-as-new boundary': 'plain',
};
const KNOBS: Record<Config, Record<string, string>> = {
  plain: { AGENT_TOOL_PAUSE_MS: String(TOOL_PAUSE_MS), AGENT_TOOL_PAUSE_TOOLS: 'search_policy' },
  before: { AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS: String(REFUND_STALL_MS) },
  after: { AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: String(REFUND_STALL_MS) },
};

// Every group starts its own workers; the fixture ends them all (hung, SIGSTOPped ones too).
const fixture = agentFixture({ queue: 'fault-matrix', worker: false, refunds: true });
/** Clients of the restart group's own server. */
const clients: Client[] = [];
let restartServer: DevServer | undefined; // the restart group's own server
const timings: Array<{ cell: string; faultToCloseMs?: number; startToCloseMs: number }> = [];

/** A set of task queues (one per worker config) on one server, and their workers. */
class Group {
  readonly queues: Record<Config, TemporalEnv>;
  private readonly started = new Map<Config, WorkerProcess[]>();

  constructor(
    readonly name: string,
    server: Pick<TemporalEnv, 'address' | 'namespace' | 'uiUrl'>,
    public client: Client,
  ) {
    const env = (c: Config): TemporalEnv => ({ ...testEnvFor(server), taskQueue: uniqueId(`fm-${name}-${c}`) });
    this.queues = { plain: env('plain'), before: env('before'), after: env('after') };
  }

  /** Starts a worker on the config's queue; `knobs` false gives a plain worker (no drill knobs). */
  start(config: Config, knobs = true): WorkerProcess {
    const w = fixture.startWorker(
      { OPENAI_TIMEOUT_SECONDS: '120', ...(knobs ? KNOBS[config] : {}) },
      this.queues[config],
    );
    this.started.set(config, [...(this.started.get(config) ?? []), w]);
    return w;
  }

  /** Ends this group's workers (hung ones too) so the next group has the machine. */
  async killAll(): Promise<void> {
    await Promise.all([...this.started.values()].flat().map((w) => w.kill()));
  }

  /** The config's first worker: the one every run starts on, and the one a fault hits. */
  first(config: Config): WorkerProcess {
    return this.started.get(config)?.[0] ?? assert.fail(`group ${this.name} has no ${config} worker`);
  }
}

function testEnvFor(server: Pick<TemporalEnv, 'address' | 'namespace' | 'uiUrl'>): TemporalEnv {
  return { ...testEnv('unused'), address: server.address, namespace: server.namespace, uiUrl: server.uiUrl };
}

// ---- runs -------------------------------------------------------------------------------------

interface Variant {
  /**
   * How the model answers the decision the fault is about (deciding: step 1; continue-as-new: step 3,
   * the first of the run the chain continued into): never; never, then at once on a retry; or when
   * the test releases it (`gated`, every attempt waits for the release).
   */
  llm?: 'hang' | 'hang-then-answer' | 'gated';
  llmMaxAttempts?: number;
  maxSeconds?: number;
  /** Read-only tool phase: search_policy starts only when the test releases the model's answer. */
  gatedTool?: boolean;
  /** The refund is proposed when the run has this much agent time left (the deadline then fires during the refund). */
  refundLeftMs?: number;
  /** The step before the continue-as-new boundary is slow, so the chain is older than its latest run. */
  slowBeforeBoundaryMs?: number;
}

class Run {
  readonly id: string;
  readonly user: number;
  /** Holds the model's answer that starts (tool) or ends (decision) the call the fault is about. */
  readonly gate?: Gate;
  firstRunId = '';
  startedAtMs = 0;

  constructor(
    readonly phase: Phase,
    readonly group: Group,
    readonly variant: Variant = {},
  ) {
    this.id = uniqueId('fm');
    this.user = fixture.refunds.nextUser();
    if (variant.gatedTool) this.gate = gate(tool('search_policy', { query: 'refund window' }));
    else if (variant.llm === 'gated') this.gate = gate(finalAnswer('done'));
  }

  get env(): TemporalEnv {
    return this.group.queues[CONFIG_OF[this.phase]];
  }

  /** A handle on the current client (the restart group replaces its client after the restart). */
  handle(): WorkflowHandle<typeof reactAgent> {
    return this.group.client.workflow.getHandle<typeof reactAgent>(this.id);
  }

  rows() {
    return fixture.refunds.rows({ workflow_id: this.id });
  }

  async start(): Promise<void> {
    fixture.llm.script(this.id, byStep(this.script()));
    const v = this.variant;
    const input = agentInput({
      goal: refundGoal(this.user),
      principal: String(this.user),
      allow: REFUND_ALLOW,
      budget: { max_seconds: v.maxSeconds ?? 300 },
      ...(v.llmMaxAttempts !== undefined ? { llm_max_attempts: v.llmMaxAttempts } : {}),
      ...(this.phase === 'continue-as-new boundary' ? { continue_as_new_every: 2 } : {}),
    });
    this.startedAtMs = Date.now(); // refined below from the server's start time
    const handle = await startRun(this.group.client, this.env, input, this.id);
    this.firstRunId = handle.firstExecutionRunId;
    this.startedAtMs = (await handle.describe()).startTime.getTime();
  }

  private script(): Record<number, StepReply | StepReply[]> {
    const done = finalAnswer('done');
    const decision = (): StepReply[] => {
      if (this.variant.llm === 'hang') return [{ hang: true }];
      if (this.variant.llm === 'gated') return [this.gate!.reply];
      return [{ hang: true }, done];
    };
    const u = this.user;
    switch (this.phase) {
      case 'deciding':
        return { 1: decision() };
      case 'read-only tool':
        return { 1: this.gate?.reply ?? tool('search_policy', { query: 'refund window' }), 2: done };
      case 'effect before commit':
      case 'effect after commit':
      case 'awaiting approval': {
        const left = this.variant.refundLeftMs;
        // The agent's clock runs until the approval wait begins: answer when `left` ms remain.
        const refund: StepReply =
          left === undefined
            ? refundOf(u)
            : () =>
                ({
                  ...refundOf(u),
                  delayMs: Math.max(0, this.startedAtMs + this.variant.maxSeconds! * 1000 - left - Date.now()),
                }) as Reply;
        return { 1: billingOf(u), 2: refund, 3: done };
      }
      case 'continue-as-new boundary': {
        const slow = this.variant.slowBeforeBoundaryMs;
        return {
          1: tool('get_user_profile', { user_id: u }),
          2: slow ? ({ ...billingOf(u), delayMs: slow } as Reply) : billingOf(u),
          3: decision(),
          4: done,
        };
      }
    }
  }

  /** Waits until the run stands at the phase (for an effect: awaiting the approval that starts it). */
  async staged(): Promise<void> {
    switch (this.phase) {
      case 'deciding':
        await llmRequest(fixture.llm, this.id, 1);
        return;
      case 'read-only tool':
        if (this.gate) await llmRequest(fixture.llm, this.id, 1);
        else await waitStarted(this.handle(), 'search_policy');
        return;
      case 'continue-as-new boundary': {
        await llmRequest(fixture.llm, this.id, 3);
        const latest = (await this.handle().describe()).runId;
        assert.notEqual(latest, this.firstRunId, 'step 3 runs in the run the chain continued into');
        return;
      }
      default:
        await eventually('the refund awaiting approval', () => pendingApproval(this.handle()), 60_000);
    }
  }

  /** Enters the phase: the call the fault is about is in flight when this returns. */
  async enter(): Promise<void> {
    if (this.variant.gatedTool) {
      this.gate!.release();
      await waitStarted(this.handle(), 'search_policy');
    } else if (this.phase === 'effect before commit' || this.phase === 'effect after commit') {
      await this.approve();
      // The drill stalls the first attempt right after planning (before) or committing (after).
      const state = this.phase === 'effect before commit' ? 'planned' : 'confirmed';
      await eventually(`a ${state} refund row`, async () => (await this.rows()).find((r) => r.state === state), 60_000);
    }
  }

  async approve(): Promise<void> {
    await answerApproval(this.group.client, this.id, { decision: 'approve', operator: 'fault-matrix' });
  }

  /** Why the call of this phase is no longer in flight (a fault landing now would hit another phase), or undefined. */
  async notInFlight(): Promise<string | undefined> {
    const type = IN_FLIGHT[this.phase];
    if (type === undefined) return (await pendingApproval(this.handle())) ? undefined : 'no approval pending';
    return (await startedActivity(this.handle(), type)) ? undefined : `${type} is not running`;
  }

  result(): Promise<AgentResult> {
    return runResult(this.handle());
  }
}

/** Runs `work`, then waits at the barrier; a failure leaves the barrier, so the other cells go on. */
async function thenArrive(barrier: Barrier, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    barrier.leave();
    throw err;
  }
  await barrier.arrive();
}

/**
 * One fault for the runs of every phase: each run gets in place, then all enter their phase at once
 * (so the refunds, whose stalled attempt Temporal retries 2 s after its last heartbeat, enter right
 * before the fault), then `apply` runs once. It records which runs were no longer in flight when the
 * fault landed (a fault that missed its phase would prove nothing) and when it landed.
 */
class SharedFault {
  at = 0;
  private readonly runs: Run[] = [];
  private readonly missed = new Map<string, string | undefined>();
  private readonly inPlace = new Barrier(PHASES.length, async () => undefined);
  private readonly fault: Barrier;

  constructor(
    private readonly what: string,
    apply: () => Promise<void>,
  ) {
    this.fault = new Barrier(PHASES.length, async () => {
      await Promise.all(this.runs.map(async (r) => this.missed.set(r.id, await r.notInFlight())));
      this.at = Date.now();
      await apply();
    });
  }

  /** Starts the run, brings it in place, enters its phase, and returns once the fault has been applied. */
  async hit(run: Run): Promise<void> {
    this.runs.push(run);
    await thenArrive(this.inPlace, async () => {
      await run.start();
      await run.staged();
    });
    await thenArrive(this.fault, () => run.enter());
    assert.equal(this.missed.get(run.id), undefined, `in flight when ${this.what}: ${this.missed.get(run.id)}`);
  }
}

// ---- the checks every cell makes ------------------------------------------------------------

interface Observed {
  run: Run;
  result: AgentResult;
  /** The event the fault is measured from: the cancel request, or the max_seconds timer firing. */
  cut?: 'cancel' | 'deadline';
  /** Assert the hung-worker bound from the cut to the close. */
  bound?: boolean;
  /** When the fault was applied, for the timing report (the cut's event time when there is one). */
  faultAtMs?: number;
}

/** Whether an activity of this type completed on a retry (attempt 2 or later). */
function retryAnswered(events: Awaited<ReturnType<typeof historyOf>>, type: string): boolean {
  const scheduled = new Map<string, string | null | undefined>();
  const attempts = new Map<string, number>();
  for (const e of events) {
    if (e.activityTaskScheduledEventAttributes)
      scheduled.set(String(e.eventId), e.activityTaskScheduledEventAttributes.activityType?.name);
    if (e.activityTaskStartedEventAttributes)
      attempts.set(String(e.eventId), e.activityTaskStartedEventAttributes.attempt ?? 1);
  }
  return events.some((e) => {
    const done = e.activityTaskCompletedEventAttributes;
    return (
      done !== null &&
      done !== undefined &&
      scheduled.get(String(done.scheduledEventId)) === type &&
      (attempts.get(String(done.startedEventId)) ?? 1) > 1
    );
  });
}

async function check(t: TestContext, phase: Phase, fault: Fault, o: Observed): Promise<void> {
  const expected = EXPECTED[phase][fault];
  const { run, result } = o;
  const handle = run.handle();
  const events = await historyOf(handle);
  const closedAt = await closedAtMs(handle);
  const description = await handle.describe();

  const cancelRequested = events.find((e) => e.workflowExecutionCancelRequestedEventAttributes);
  const deadlineFired = budgetTimerFired(events);
  const cutEvent = o.cut === 'cancel' ? cancelRequested : o.cut === 'deadline' ? deadlineFired : undefined;
  const cutAtMs = cutEvent ? eventTimeMs(cutEvent) : undefined;
  const faultAt = cutAtMs ?? o.faultAtMs;
  const faultToCloseMs = faultAt !== undefined ? closedAt - faultAt : undefined;
  timings.push({ cell: `${phase} × ${fault}`, faultToCloseMs, startToCloseMs: closedAt - run.startedAtMs });
  t.diagnostic(
    `${result.stop_reason}, effects ${JSON.stringify((result.effects ?? []).map((e) => `${e.state}/${e.via}`))}, fault->close ${faultToCloseMs ?? '-'} ms, start->close ${closedAt - run.startedAtMs} ms`,
  );

  // 1. The stop reason, and the Temporal status that goes with it.
  assert.equal(
    result.stop_reason,
    expected.stop,
    `stop_reason (history of the latest run:\n${timeline(events, run.startedAtMs)})`,
  );
  assert.equal(description.status.name, expected.stop === 'cancelled' ? 'CANCELLED' : 'COMPLETED');
  // A cut-off effect whose retried attempt reported back before the cut reached it (it found the
  // refund already committed, by key) is in the trace too: the tool answered, and the effect says so.
  const answeredAfterAll =
    expected.stop === 'success' ? [] : (result.effects ?? []).filter((e) => e.via === 'tool').map((e) => e.tool);
  // A read-only lookup on the hung worker is retried on the healthy one after its 2 s heartbeat
  // timeout: when that retry answers before the cancel arrives, the trace has it (and it was a retry).
  const rescued =
    fault === 'worker hung + cancel' && phase === 'read-only tool' && retryAnswered(events, 'search_policy')
      ? ['search_policy']
      : [];
  assert.deepEqual(
    result.trace.map((e) => e.tool),
    [...expected.trace, ...rescued, ...answeredAfterAll],
    'trace',
  );
  if (expected.stop === 'success') assert.equal(result.answer, 'done');
  if (phase === 'continue-as-new boundary')
    assert.notEqual(description.runId, run.firstRunId, 'the chain continued as new before the fault');

  // 2. The effects list against the refunds database.
  assertEffectsMatchDb(result, await run.rows(), expected.effects);

  // 3. Nothing after a cancel (or a deadline): no new activity but the reconcile, no model request, no refund row.
  if (o.cut === 'cancel') {
    assert.ok(cancelRequested, 'the cancel request is in the history');
    assert.equal(cancelRequested.workflowExecutionCancelRequestedEventAttributes!.cause, REASON);
    assertNothingAfter(afterCut(events, cancelRequested, fixture.llm.requests(run.id), await run.rows()), 'the cancel');
  } else if (o.cut === 'deadline') {
    assert.ok(deadlineFired, 'the max_seconds timer fired in the latest run');
    assertNothingAfter(afterCut(events, deadlineFired, fixture.llm.requests(run.id), await run.rows()), 'the deadline');
  }

  // 4. A hung worker: the run still closed within the stated bound of the cancel or the deadline.
  if (o.bound) {
    assert.ok(cutAtMs !== undefined);
    assert.ok(
      closedAt - cutAtMs <= HUNG_BOUND_MS,
      `closed ${closedAt - cutAtMs} ms after the ${o.cut}, bound ${HUNG_BOUND_MS} ms; events:\n${timeline(events, cutAtMs)}`,
    );
  }
}

/**
 * A cut-off refund's first attempt, stalled on `worker`, must never confirm: the reconcile settled
 * (voided) the record and raised its fence. The cell waits for the attempt to end, whichever way
 * (the worker's activity slots drain): it ends without trying (seen when its worker stayed up), or
 * its stall ends, it tries to commit, finds the record voided and reports into the void (its
 * observation names the key in the worker's log). Says which.
 */
async function stalledAttemptCannotConfirm(run: Run, worker: WorkerProcess, from: number): Promise<string> {
  const key = (await run.rows())[0]?.idempotency_key ?? assert.fail('the refund was never planned');
  await activitiesDrained(worker, REFUND_STALL_MS + 30_000);
  assert.deepEqual(
    (await run.rows()).map((r) => [r.state, r.rejection]),
    [['rejected', 'voided']],
    'the stalled attempt found the record settled',
  );
  return worker.output().indexOf(key, from) >= 0
    ? 'the stalled attempt woke, tried to commit and found the record voided'
    : 'the stalled attempt ended without trying to commit';
}

// ---- setup --------------------------------------------------------------------------------------

const cell = (phase: Phase, fault: Fault) => `${phase} × ${fault}`;

after(() => {
  if (timings.length > 0) {
    console.log('fault matrix timings (fault -> close, start -> close, ms):');
    for (const t of [...timings].sort((a, b) => a.cell.localeCompare(b.cell))) {
      console.log(
        `  ${t.cell.padEnd(56)} ${String(t.faultToCloseMs ?? '-').padStart(7)} ${String(t.startToCloseMs).padStart(7)}`,
      );
    }
  }
});

/** Registers in the calling describe(): a group started with its workers before the cells, ended after them. */
function withGroup(name: string, set: (group: Group) => void): void {
  let group: Group | undefined;
  before(async () => {
    group = new Group(name, fixture.env, fixture.client);
    set(group);
    await startWorkers(group);
  });
  after(() => group?.killAll());
}

/**
 * A group's workers, one per config, started together before its cells, each warmed up with one
 * short run: a fresh worker's first workflow task (loading the workflow bundle) takes seconds on
 * this machine, which would eat the tight budgets of the deadline cells.
 */
async function startWorkers(group: Group): Promise<void> {
  const configs = ['plain', 'before', 'after'] as const;
  await Promise.all(configs.map((c) => group.start(c).ready));
  await Promise.all(
    configs.map(async (c) => {
      const id = uniqueId('fm-warm-up');
      fixture.llm.script(id, [finalAnswer('warm')]);
      const result = await runResult(await startRun(group.client, group.queues[c], agentInput(), id));
      assert.equal(result.stop_reason, 'success', `warm-up run on ${c}`);
    }),
  );
}

// The groups run one after the other (the machine is small); the cells of a group run concurrently.

// ---- operator cancel and max_seconds deadline, with live workers ------------------------------

describe('fault matrix: operator cancel and max_seconds deadline, live workers', { concurrency: true }, () => {
  let live!: Group;
  withGroup('live', (g) => (live = g));

  /** The cancel as an operator sends it: the CLI, except inside a refund's ~2 s heartbeat window, where a process start may not fit. */
  async function operatorCancel(run: Run): Promise<void> {
    if (IN_FLIGHT[run.phase] === 'issue_refund') return cancelRun(run.group.client, run.id, REASON);
    const out = await runCli(run.env, ['cancel', run.id, '--reason', REASON]);
    assert.equal(out.code, 0, `agent cancel: ${out.stderr}`);
  }

  for (const phase of PHASES) {
    it(cell(phase, 'operator cancel'), { timeout: CELL_TIMEOUT_MS }, async (t) => {
      const run = new Run(phase, live, { llm: 'hang' });
      await run.start();
      await run.staged();
      await run.enter();
      const from = live.first(CONFIG_OF[phase]).output().length;
      await operatorCancel(run);
      const result = await run.result();
      if (phase === 'effect before commit')
        t.diagnostic(await stalledAttemptCannotConfirm(run, live.first('before'), from));
      await check(t, phase, 'operator cancel', { run, result, cut: 'cancel' });
    });
  }

  // deciding × deadline is in the hung-worker group: with a live worker it is the happy path.
  for (const phase of PHASES.filter((p) => p !== 'deciding')) {
    it(cell(phase, 'max_seconds deadline'), { timeout: CELL_TIMEOUT_MS }, async (t) => {
      const runDeadlineCell = async (attempt: number): Promise<void> => {
        const variant: Variant =
          phase === 'read-only tool'
            ? { maxSeconds: 3 }
            : phase === 'awaiting approval'
              ? { maxSeconds: 5 }
              : phase === 'continue-as-new boundary'
                ? { maxSeconds: 8, slowBeforeBoundaryMs: CAN_SLOW_MS, llm: 'hang' }
                : // The deadline fires ~1 s after the approval: inside the stalled attempt's 2 s heartbeat window.
                  { maxSeconds: 6, refundLeftMs: 1_100 };
        const run = new Run(phase, live, variant);
        await run.start();
        await run.staged();
        if (phase === 'awaiting approval') {
          // The deadline passes while a person is awaited: the run keeps waiting, then finishes.
          await eventually(
            'the max_seconds timer firing',
            async () => budgetTimerFired(await historyOf(run.handle())),
            30_000,
          );
          assert.equal((await run.handle().describe()).status.name, 'RUNNING');
          assert.ok(await pendingApproval(run.handle()), 'still awaiting approval after max_seconds');
          await run.approve();
          const result = await run.result();
          assert.ok(
            result.usage.elapsed_ms < variant.maxSeconds! * 1000,
            `agent time ${result.usage.elapsed_ms} ms excludes the wait`,
          );
          await check(t, phase, 'max_seconds deadline', { run, result });
          return;
        }
        const from = live.first(CONFIG_OF[phase]).output().length;
        await run.enter();
        const result = await run.result();
        const afterRun = await historyOf(run.handle());
        if (phase === 'effect before commit' && retryAnswered(afterRun, 'issue_refund')) {
          // The deadline missed its phase: the server's timer fired inside the stalled attempt's 2 s
          // heartbeat window, but the workflow task that acts on it ran late (a loaded machine), after
          // Temporal had timed the attempt out and its retry had committed. A refund made before the
          // cut is a legitimate outcome; it must then be reported as made, once.
          assert.deepEqual(
            (await run.rows()).map((r) => r.state),
            ['confirmed'],
          );
          // ...and only when its last cancel check came first: a check that started after the call's
          // cancel was recorded and still committed would be a broken promise, not a missed phase.
          // The commit itself may land a few ms after the cancel (the check and the commit are two
          // steps); the row records when the check was asked.
          const refund = afterRun.find(
            (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'issue_refund',
          )!;
          const cancelAsked = afterRun.find(
            (e) => String(e.activityTaskCancelRequestedEventAttributes?.scheduledEventId) === String(refund.eventId),
          );
          const [row] = await run.rows();
          assert.ok(row!.cancel_checked_at, 'the committed refund records its cancel check');
          assert.ok(
            cancelAsked === undefined || Date.parse(row!.cancel_checked_at!) <= eventTimeMs(cancelAsked),
            `the refund's cancel check was asked at ${row!.cancel_checked_at}, after its cancel was recorded`,
          );
          if (cancelAsked !== undefined)
            t.diagnostic(
              `cancel check ${eventTimeMs(cancelAsked) - Date.parse(row!.cancel_checked_at!)} ms before the cancel, commit ${Date.parse(row!.confirmed_at!) - eventTimeMs(cancelAsked)} ms after it`,
            );
          assertEffectsMatchDb(result, await run.rows(), ['confirmed']);
          if (attempt < DEADLINE_TRIES) return runDeadlineCell(attempt + 1);
          assert.fail(`the deadline missed its phase ${DEADLINE_TRIES} times in a row`);
        }
        if (phase === 'effect before commit')
          t.diagnostic(await stalledAttemptCannotConfirm(run, live.first('before'), from));
        await check(t, phase, 'max_seconds deadline', { run, result, cut: 'deadline' });
        const events = await historyOf(run.handle());
        const fired = budgetTimerFired(events)!;
        const type = IN_FLIGHT[phase]!;
        // The deadline hit the phase: its call was scheduled in the latest run before the timer fired.
        const scheduled = events.findIndex((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type);
        assert.ok(scheduled >= 0 && scheduled < events.indexOf(fired), `${type} was in flight at the deadline`);
        if (phase === 'continue-as-new boundary') {
          // The budget counts from the chain's start, not from the run it continued into.
          const latestStart = (await run.handle().describe()).startTime.getTime();
          assert.ok(latestStart - run.startedAtMs >= CAN_SLOW_MS, 'the latest run started well after the chain');
          // Its timer fires max_seconds after the chain's start (give or take the workflow task that
          // armed it), not max_seconds after its own start (CAN_SLOW_MS later).
          const firesAfter = budgetDeadlineMs(events)! - run.startedAtMs;
          assert.ok(
            Math.abs(firesAfter - variant.maxSeconds! * 1000) < 1_500,
            `the latest run's max_seconds timer fires ${firesAfter} ms after the chain started`,
          );
        }
      };
      await runDeadlineCell(1);
    });
  }
});

// ---- worker SIGKILL, then a new worker: one kill for all six runs ------------------------------

describe('fault matrix: worker SIGKILL + new worker', { concurrency: true }, () => {
  let killed!: Group;
  withGroup('kill', (g) => (killed = g));
  const kill = new SharedFault('the workers were killed', async () => {
    await Promise.all((['plain', 'before', 'after'] as const).map((c) => killed.first(c).kill()));
    // New workers without drill knobs: the retried attempts run normally.
    await Promise.all((['plain', 'before', 'after'] as const).map((c) => killed.start(c, false).ready));
  });

  for (const phase of PHASES) {
    it(cell(phase, 'worker SIGKILL + new worker'), { timeout: CELL_TIMEOUT_MS }, async (t) => {
      const run = new Run(phase, killed, { llm: 'hang-then-answer', gatedTool: phase === 'read-only tool' });
      await kill.hit(run);
      if (phase === 'awaiting approval') await run.approve();
      const result = await run.result();
      await check(t, phase, 'worker SIGKILL + new worker', { run, result, faultAtMs: kill.at });
      if (phase === 'deciding' || phase === 'continue-as-new boundary') {
        // The decision was retried on the new worker with the same Idempotency-Key.
        const step = phase === 'deciding' ? 1 : 3;
        const keys = fixture.llm
          .requests(run.id)
          .filter((r) => r.step === step)
          .map((r) => r.idempotencyKey);
        assert.ok(keys.length >= 2, `step ${step} was retried`);
        assert.equal(new Set(keys).size, 1, `one key for every attempt: ${keys.join(', ')}`);
      }
    });
  }
});

// ---- worker hung (SIGSTOP) with a healthy second worker polling, then a cancel --------------
//
// The runs of plain phases share one worker, and are started on it alone; the healthy worker starts
// while they get in place; then the first one is stopped and the runs are cancelled (client API:
// the CLI would wait for the end). Their decisions get one attempt (llm_max_attempts 1), so the
// attempt on the hung worker is the one the workflow must judge: with more, Temporal retries the
// call on the healthy worker before the hung worker lets go of the run's workflow task, and that
// retry is what the workflow sees (and a model request after the cancel). The same worker carries
// deciding × max_seconds deadline: it is stopped ~1 s before that run's deadline fires, so the
// attempt's heartbeat timeout comes after the deadline.
// A refund's worker is stopped first, then the run cancelled: the stalled attempt's heartbeat times
// out (2 s) and Temporal retries it on the healthy worker before the cancel reaches the workflow;
// that attempt reads the run's cancel flag from the server and does not commit (before commit:
// not_made), or finds the refund already committed (after commit: confirmed).

describe('fault matrix: worker hung (SIGSTOP) + cancel, healthy second worker', { concurrency: true }, () => {
  const PLAIN: Phase[] = ['deciding', 'read-only tool', 'awaiting approval', 'continue-as-new boundary'];
  /** Room to bring the other runs in place and start the healthy worker before the deadline. */
  const DEADLINE_SECONDS = 25;
  let hung!: Group;
  withGroup('hung', (g) => (hung = g));
  let deadlineRun: Run | undefined;
  let toolRun: Run | undefined;
  // Once every run has started on the first worker, the healthy one starts (bundling its workflows
  // takes seconds, while the runs get in place); it is polling before anything is frozen.
  let healthyReady: Promise<void> | undefined;
  const healthy = new Barrier(PLAIN.length + 1, async () => {
    healthyReady = hung.start('plain', false).ready;
  });
  const freeze = new Barrier(PLAIN.length + 1, async () => {
    await healthyReady;
    // When the timer really fires: armed in the run's first workflow task, for what was left then.
    const deadline = (deadlineRun && budgetDeadlineMs(await historyOf(deadlineRun.handle()))) ?? Date.now() + 3_500;
    assert.ok(
      Date.now() < deadline - 3_300,
      `in place ${Date.now() - deadline + 3_300} ms too late for the deadline window`,
    );
    await untilWallClock(deadline - 3_000);
    // The read-only tool starts now, so its pause (8 s) still runs when the worker hangs.
    if (toolRun) await toolRun.enter();
    await untilWallClock(deadline - 1_000);
    hung.first('plain').hang();
  });

  for (const phase of PLAIN) {
    it(cell(phase, 'worker hung + cancel'), { timeout: CELL_TIMEOUT_MS }, async (t) => {
      const run = new Run(phase, hung, { llm: 'hang', llmMaxAttempts: 1, gatedTool: phase === 'read-only tool' });
      if (phase === 'read-only tool') toolRun = run;
      await thenArrive(healthy, () => run.start());
      await thenArrive(freeze, () => run.staged());
      const type = IN_FLIGHT[phase];
      if (type)
        assert.equal(
          (await startedActivity(run.handle(), type))?.identity,
          hung.first('plain').identity,
          `${type} runs on the hung worker`,
        );
      await cancelRun(hung.client, run.id, REASON);
      const result = await run.result();
      await check(t, phase, 'worker hung + cancel', { run, result, cut: 'cancel', bound: true });
    });
  }

  it(cell('deciding', 'max_seconds deadline'), { timeout: CELL_TIMEOUT_MS }, async (t) => {
    const run = new Run('deciding', hung, { llm: 'hang', llmMaxAttempts: 1, maxSeconds: DEADLINE_SECONDS });
    deadlineRun = run;
    await thenArrive(healthy, () => run.start());
    await thenArrive(freeze, () => run.staged());
    assert.equal(
      (await startedActivity(run.handle(), 'decide'))?.identity,
      hung.first('plain').identity,
      'the decision runs on the hung worker',
    );
    const result = await run.result();
    await check(t, 'deciding', 'max_seconds deadline', { run, result, cut: 'deadline', bound: true });
  });

  for (const phase of ['effect before commit', 'effect after commit'] as const) {
    it(cell(phase, 'worker hung + cancel'), { timeout: CELL_TIMEOUT_MS }, async (t) => {
      const config = CONFIG_OF[phase];
      const stalled = hung.first(config);
      const run = new Run(phase, hung);
      await run.start();
      await run.staged();
      // The healthy worker polls before the refund starts; the run stays on the stalled one (sticky).
      await hung.start(config, false).ready;
      await run.enter();
      assert.equal(
        (await startedActivity(run.handle(), 'issue_refund'))?.identity,
        stalled.identity,
        'the refund runs on the worker that will hang',
      );
      // The worker hangs first, then the operator cancels: Temporal retries the stalled attempt on
      // the healthy worker before the workflow has seen the cancel; that attempt must not commit.
      stalled.hang();
      await cancelRun(hung.client, run.id, REASON);
      const result = await run.result();
      // Woken up, the stalled attempt reports into the void; the refund stays as the result says.
      const from = stalled.output().length;
      stalled.resume();
      if (phase === 'effect before commit') t.diagnostic(await stalledAttemptCannotConfirm(run, stalled, from));
      else {
        await activitiesDrained(stalled);
        assert.deepEqual(
          (await run.rows()).map((r) => r.state),
          ['confirmed'],
        );
      }
      await check(t, phase, 'worker hung + cancel', { run, result, cut: 'cancel', bound: true });
    });
  }
});

// ---- one worker hung (SIGSTOP) among healthy ones, no cancel: every run still succeeds ---------
//
// Three workers on one queue (search_policy's first attempt takes TOOL_PAUSE_MS, so a hang lands
// while tools run) and rounds of FLEET_RUNS runs of the refund scenario: all healthy (the
// baseline); one worker stopped before the runs start (it still holds open polls, and takes
// workflow tasks it never runs); then, that one resumed, the worker running the most search_policy
// calls stopped mid-run (its attempts die, and their retries meet its open polls); then, that one
// resumed, the model slowed on each run's first decision and the worker running the most of them
// stopped (requests in flight die with it, and their retries meet its open polls: Temporal attempts
// that send no request, so they must not use up llm_max_attempts). Every run must succeed on a
// budget of exactly its steps and tool calls, and a dead attempt must end at its heartbeat
// timeout, not its start-to-close. Figures: runs succeeded, time added (each round's
// median against the baseline's), and how long the hung worker held the runs it touched.

const FLEET_RUNS = 6;
/** How long the model takes over each run's first request in the mid-decision round (its retries answer at once). */
const DECISION_DELAY_MS = 8_000;
/**
 * The mid-decision round's llm_max_attempts: two requests, so one retry lost to the hung worker's
 * polls was enough to end a run llm_timeout when Temporal's attempts were the requests.
 */
const DECISION_REQUESTS = 2;
/** The trace: three tools, then the answer (marked 'final': the budget's last step is a wind-down). */
const FLEET_TRACE = ['get_user_profile', BILLING, 'search_policy', 'final'];

interface FleetRun {
  id: string;
  result: AgentResult;
  startToCloseMs: number;
  retried: RetriedAttempt[];
  workflowTaskTimeouts: WorkflowTaskTimeout[];
  /** Time the hung worker held this run: its timed-out workflow tasks, and its calls from the hang to the live attempt. */
  heldMs: number;
}

describe('fault matrix: hung worker, no cancel, healthy workers', () => {
  let queue!: TemporalEnv;
  const fleet: WorkerProcess[] = [];
  before(async () => {
    queue = fixture.queue('fm-fleet');
    for (let i = 0; i < 3; i++)
      fleet.push(fixture.startWorker({ OPENAI_TIMEOUT_SECONDS: '120', ...KNOBS.plain }, queue));
    await Promise.all(fleet.map((w) => w.ready));
    await fleetRound(queue); // warm-up: a fresh worker's first workflow tasks take seconds
  });
  after(() => Promise.all(fleet.map((w) => w.kill())));

  it('hung worker, no cancel', { timeout: CELL_TIMEOUT_MS }, async (t) => {
    const healthy = await fleetRound(queue);
    fleet[0]!.hang();
    const stoppedFirst = await fleetRound(queue, Date.now());
    fleet[0]!.resume();
    // Stops the worker running the most calls in flight; returns how many it was running.
    let stopped: WorkerProcess | undefined;
    const stopBusiest = (runningOn: string[]): number => {
      const count = (w: WorkerProcess) => runningOn.filter((id) => id === w.identity).length;
      stopped = [...fleet].sort((a, b) => count(b) - count(a))[0]!;
      stopped.hang();
      return count(stopped);
    };
    let inFlightOnHung = 0;
    const midRun = await fleetRound(queue, (runningOn) => (inFlightOnHung = stopBusiest(runningOn)));
    stopped!.resume();
    let decidingOnHung = 0;
    const midDecision = await fleetRound(queue, (runningOn) => (decidingOnHung = stopBusiest(runningOn)), 'decide');

    const baseline = median(healthy.map((r) => r.startToCloseMs));
    const rounds = {
      healthy,
      'stopped before start': stoppedFirst,
      'stopped mid-run': midRun,
      'stopped mid-decision': midDecision,
    };
    for (const [name, runs] of Object.entries(rounds)) {
      const ok = runs.filter((r) => r.result.stop_reason === 'success').length;
      const held = runs.filter((r) => r.heldMs > 0);
      t.diagnostic(
        `${name}: ${ok}/${runs.length} runs succeeded, time added (median) ${median(runs.map((r) => r.startToCloseMs)) - baseline} ms` +
          (held.length ? `; held ${held.length} runs for ${median(held.map((r) => r.heldMs))} ms (median)` : '') +
          ` | ${runs.map(describeFleetRun).join(' | ')}`,
      );
    }
    const all = Object.entries(rounds).flatMap(([name, runs]) => runs.map((r) => ({ name, ...r })));
    assert.deepEqual(
      all.filter((r) => r.result.stop_reason !== 'success').map((r) => `${r.name}: ${r.result.stop_reason}`),
      [],
      'runs that did not succeed',
    );
    for (const r of all) {
      // The budget counts a call once, however many attempts it took: 3 tool calls in 4 steps.
      assert.deepEqual(
        r.result.trace.map((e) => e.tool),
        FLEET_TRACE,
      );
      assert.deepEqual([r.result.usage.steps, r.result.usage.tool_calls], [4, 3]);
      // A dead attempt is noticed at its heartbeat timeout, not at its start-to-close (10 s).
      for (const a of r.retried)
        assert.notEqual(a.before, 'START_TO_CLOSE', `${r.name}: ${r.id}: ${a.activity} attempt ${a.attempt}`);
    }
    // The fault hit: tools were running on the worker that hung, and a live worker took them over.
    assert.ok(inFlightOnHung > 0, 'search_policy calls in flight on the hung worker');
    assert.ok(
      midRun.some((r) => r.retried.some((a) => a.activity === 'search_policy' && a.before === 'HEARTBEAT')),
      'a search_policy attempt died with its worker and was retried',
    );
    // And decisions: requests were in flight on the worker that hung, and their decisions were retried.
    // History keeps only the failure before the last attempt: the attempt that died is followed by one
    // on a live worker, which may fail too while the run's view Query still goes to the hung worker
    // (it held the workflow, sticky); either is the hang's doing, and nothing else fails here.
    const hangFailure = /^HEARTBEAT$|could not read the run's view/;
    assert.ok(decidingOnHung > 0, 'decisions in flight on the hung worker');
    assert.ok(
      midDecision.some((r) => r.retried.some((a) => a.activity === 'decide' && hangFailure.test(a.before))),
      'a decide attempt died with its worker and was retried',
    );
  });
});

function describeFleetRun(r: FleetRun): string {
  const retried = r.retried.map((a) => `${a.activity} attempt ${a.attempt} after ${a.before}`);
  const tasks = r.workflowTaskTimeouts.map((w) => `${w.type} ${w.ms} ms`);
  return (
    `${r.result.stop_reason} ${r.startToCloseMs} ms` +
    (retried.length ? `, retried ${retried.join(', ')}` : '') +
    (tasks.length ? `, workflow tasks timed out ${tasks.join(', ')}` : '')
  );
}

/**
 * FLEET_RUNS runs of the refund scenario on `queue`, concurrently, each on a budget of exactly its
 * 4 steps and 3 tool calls. `hang`: when a worker was stopped (epoch ms), or a function that stops
 * one once every run's `inFlight` activity is running, given the identities of the workers running
 * them; for 'decide' the model takes DECISION_DELAY_MS over each run's first request.
 */
async function fleetRound(
  queue: TemporalEnv,
  hang?: number | ((runningOn: string[]) => void),
  inFlight: 'search_policy' | 'decide' = 'search_policy',
): Promise<FleetRun[]> {
  const handles = await Promise.all(
    Array.from({ length: FLEET_RUNS }, () => {
      const id = uniqueId('fm-fleet');
      fixture.llm.script(
        id,
        byStep({
          1:
            inFlight === 'decide'
              ? [
                  tool('get_user_profile', { user_id: 42 }, { delayMs: DECISION_DELAY_MS }),
                  tool('get_user_profile', { user_id: 42 }),
                ]
              : tool('get_user_profile', { user_id: 42 }),
          2: tool(BILLING, { user_id: 42 }),
          3: tool('search_policy', { query: 'refund window' }),
          4: finalAnswer('done'),
        }),
      );
      const budget = { max_steps: 4, max_tool_calls: 3, max_seconds: 300 };
      const input = agentInput({ budget, ...(inFlight === 'decide' ? { llm_max_attempts: DECISION_REQUESTS } : {}) });
      return startRun(fixture.client, queue, input, id);
    }),
  );
  let hungAtMs = typeof hang === 'number' ? hang : Infinity;
  if (typeof hang === 'function') {
    hang(await Promise.all(handles.map(async (h) => (await waitStarted(h, inFlight)).identity)));
    hungAtMs = Date.now();
  }
  return Promise.all(
    handles.map(async (handle) => {
      const result = await runResult(handle);
      const events = await historyOf(handle);
      const d = await handle.describe();
      const retried = retriedAttempts(events);
      const tasks = workflowTaskTimeouts(events);
      const heldCalls = retried.map((a) => Math.max(0, a.startedAtMs - Math.max(a.scheduledAtMs, hungAtMs)) || 0);
      return {
        id: handle.workflowId,
        result,
        startToCloseMs: d.closeTime!.getTime() - d.startTime.getTime(),
        retried,
        workflowTaskTimeouts: tasks,
        heldMs: [...heldCalls, ...tasks.map((w) => w.ms)].reduce((a, b) => a + b, 0),
      };
    }),
  );
}

// ---- Temporal server SIGKILL and restart on the same SQLite file: one restart for six runs ----

describe('fault matrix: Temporal server SIGKILL + restart', { concurrency: true }, () => {
  let restarted: Group;
  const restart = new SharedFault('the server was killed', async () => {
    await restarted.client.connection.close();
    await restartServer!.kill();
    await restartServer!.restart();
    restarted.client = await connectClient(restarted.queues.plain);
    clients.push(restarted.client);
  });
  before(async () => {
    const port = await freePort();
    const uiPort = await freePort([port]);
    restartServer = await startDevServer({
      dbFile: path.join(fixture.refunds.dir, 'temporal', 'temporal.sqlite'),
      cliPath: process.env.TEMPORAL_CLI_PATH,
      port,
      uiPort,
    });
    const server = { address: restartServer.address, namespace: restartServer.namespace, uiUrl: restartServer.uiUrl };
    const restartClient = await connectClient({ ...fixture.env, ...server });
    clients.push(restartClient);
    restarted = new Group('restart', server, restartClient);
    await startWorkers(restarted);
  });
  after(async () => {
    await restarted.killAll();
    await Promise.all(clients.map((c) => c.connection.close().catch(() => undefined)));
    await restartServer?.stop();
  });

  for (const phase of PHASES) {
    it(cell(phase, 'server SIGKILL + restart'), { timeout: CELL_TIMEOUT_MS }, async (t) => {
      // The decision in flight is answered once the server is back (its attempt may have been retried meanwhile).
      const run = new Run(phase, restarted, { llm: 'gated', gatedTool: phase === 'read-only tool' });
      await restart.hit(run);
      if (run.gate && !run.variant.gatedTool) run.gate.release();
      if (phase === 'awaiting approval') await run.approve();
      const result = await run.result();
      await check(t, phase, 'server SIGKILL + restart', { run, result, faultAtMs: restart.at });
    });
  }
});
