// Plumbing for the fault matrix (test/durability/fault-matrix.e2e.test.ts): model scripts with gates,
// reading a run's history and pending activities, barriers that apply one fault to several runs
// at once, and the checks every cell shares (effects against the refunds database, nothing after
// a cancel).
import assert from 'node:assert/strict';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { RecordedRequest, Reply, ScriptedLlmServer } from '../../offline-model/scripted-llm-server';
import type { StepReply } from '../../offline-model/scripted-replies';
import type { RefundRecord } from '../../domains/support/backend/refunds/service';
import { VOIDED } from '../../domains/support/backend/refunds/service';
import type { AgentResult, EffectOutcome } from '../../common/types';
import { eventually } from './harness';
import { localActivityType } from './history-scan';
import type { WorkerProcess } from '../../local-servers/worker-process';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const { PendingActivityState, TimeoutType } = temporal.api.enums.v1;

// ---- model scripts ---------------------------------------------------------------------------

export { byStep } from '../../offline-model/scripted-replies';
export type { StepReply } from '../../offline-model/scripted-replies';

export interface Gate {
  /** Use as a StepReply: the request waits until release(). */
  reply: StepReply;
  release(): void;
}

/** Holds a step's reply until the test releases it, so the next call starts when the test says. */
export function gate(reply: Reply): Gate {
  let release!: () => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  return { reply: async () => (await open, reply), release };
}

/** Waits until a request of this run (and step) reached the model. */
export function llmRequest(
  llm: ScriptedLlmServer,
  workflowId: string,
  step: number,
  timeoutMs = 60_000,
): Promise<RecordedRequest> {
  return llm.waitFor((r) => r.workflowId === workflowId && r.step === step, timeoutMs);
}

// ---- history and pending activities -----------------------------------------------------------

export function eventTimeMs(e: HistoryEvent): number {
  const t = e.eventTime!;
  return Number(t.seconds ?? 0) * 1000 + Math.round((t.nanos ?? 0) / 1e6);
}

/** The latest run's history (a chain that continued as new: its last run). */
export async function historyOf(handle: WorkflowHandle): Promise<HistoryEvent[]> {
  return (await handle.fetchHistory()).events ?? [];
}

export function activityTypeOf(events: HistoryEvent[], scheduledEventId: unknown): string | undefined {
  const scheduled = events.find((e) => String(e.eventId) === String(scheduledEventId));
  return scheduled?.activityTaskScheduledEventAttributes?.activityType?.name ?? undefined;
}

/** The run's max_seconds timer firing (the timer the workflow starts with summary "run deadline: ..."). */
export function budgetTimerFired(events: HistoryEvent[]): HistoryEvent | undefined {
  const budgetTimers = new Set(
    events
      .filter((e) => e.timerStartedEventAttributes && payloadText(e.userMetadata?.summary).includes('run deadline'))
      .map((e) => String(e.eventId)),
  );
  return events.find(
    (e) => e.timerFiredEventAttributes && budgetTimers.has(String(e.timerFiredEventAttributes.startedEventId)),
  );
}

/** When the run's current max_seconds timer fires (epoch ms): its TimerStarted time plus its duration. */
export function budgetDeadlineMs(events: HistoryEvent[]): number | undefined {
  const started = events
    .filter((e) => e.timerStartedEventAttributes && payloadText(e.userMetadata?.summary).includes('run deadline'))
    .at(-1);
  const d = started?.timerStartedEventAttributes?.startToFireTimeout;
  return started && d
    ? eventTimeMs(started) + Number(d.seconds ?? 0) * 1000 + Math.round((d.nanos ?? 0) / 1e6)
    : undefined;
}

function payloadText(p: { data?: Uint8Array | null } | null | undefined): string {
  return p?.data ? Buffer.from(p.data).toString('utf8') : '';
}

export interface RetriedAttempt {
  activity: string;
  /** The attempt that finished the activity. */
  attempt: number;
  /** How the attempt before it ended: HEARTBEAT, START_TO_CLOSE (a timeout), or the failure's message. */
  before: string;
  /** When the activity was scheduled, and when its finishing attempt started (epoch ms). */
  scheduledAtMs: number;
  startedAtMs: number;
}

/**
 * The activities that needed more than one attempt, read from their last attempt's started event
 * (the history records only that one, with the failure of the attempt before it).
 */
export function retriedAttempts(events: HistoryEvent[]): RetriedAttempt[] {
  return events.flatMap((e) => {
    const started = e.activityTaskStartedEventAttributes;
    if (!started || (started.attempt ?? 1) <= 1) return [];
    const failure = started.lastFailure;
    const timeout = failure?.timeoutFailureInfo?.timeoutType;
    const scheduled = events.find((s) => String(s.eventId) === String(started.scheduledEventId));
    return [
      {
        activity: activityTypeOf(events, started.scheduledEventId) ?? '?',
        attempt: started.attempt ?? 1,
        before: timeout ? TimeoutType[timeout].replace('TIMEOUT_TYPE_', '') : (failure?.message ?? '?'),
        scheduledAtMs: scheduled ? eventTimeMs(scheduled) : NaN,
        startedAtMs: eventTimeMs(e),
      },
    ];
  });
}

export interface WorkflowTaskTimeout {
  /** START_TO_CLOSE (a worker took it and never answered) or SCHEDULE_TO_START (nobody took it from a sticky queue). */
  type: string;
  /** From its scheduling (START_TO_CLOSE: its start) to the timeout. */
  ms: number;
}

/** The run's workflow tasks that timed out: the ones a hung worker held. */
export function workflowTaskTimeouts(events: HistoryEvent[]): WorkflowTaskTimeout[] {
  const at = (id: unknown) => events.find((e) => String(e.eventId) === String(id));
  return events.flatMap((e) => {
    const timedOut = e.workflowTaskTimedOutEventAttributes;
    if (!timedOut?.timeoutType) return [];
    const from = at(timedOut.startedEventId) ?? at(timedOut.scheduledEventId);
    return [
      {
        type: TimeoutType[timedOut.timeoutType].replace('TIMEOUT_TYPE_', ''),
        ms: from ? eventTimeMs(e) - eventTimeMs(from) : NaN,
      },
    ];
  });
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

export interface StartedActivity {
  identity: string;
  attempt: number;
}

/** The activity of this type that a worker is running now (server's view), if any. */
export async function startedActivity(handle: WorkflowHandle, type: string): Promise<StartedActivity | undefined> {
  const pending = (await handle.describe()).raw.pendingActivities ?? [];
  const found = pending.find(
    (p) => p.activityType?.name === type && p.state === PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
  );
  return found ? { identity: found.lastWorkerIdentity ?? '', attempt: found.attempt ?? 0 } : undefined;
}

export function waitStarted(handle: WorkflowHandle, type: string, timeoutMs = 60_000): Promise<StartedActivity> {
  return eventually(`${type} running on a worker`, () => startedActivity(handle, type), timeoutMs);
}

/** When the latest run of the chain closed (epoch ms). */
export async function closedAtMs(handle: WorkflowHandle): Promise<number> {
  const closed = (await handle.describe()).closeTime;
  assert.ok(closed, 'the run has closed');
  return closed.getTime();
}

/** Activity slots the worker's SDK reports in use (its Prometheus endpoint, named in its ready line). */
export async function activitySlotsUsed(worker: WorkerProcess): Promise<number> {
  const url =
    /metrics=(http:\/\/[^ ;]+)/.exec(worker.output())?.[1] ??
    assert.fail(`worker ${worker.identity} serves no metrics`);
  const text = await (await fetch(url)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('temporal_worker_task_slots_used{') && l.includes('worker_type="ActivityWorker"'));
  return Number(line?.split(' ').at(-1) ?? NaN);
}

/** Resolves when no activity runs on the worker any more (a stalled attempt has ended, whichever way). */
export function activitiesDrained(worker: WorkerProcess, timeoutMs = 60_000): Promise<true> {
  return eventually(
    `worker ${worker.identity} to finish its activities`,
    async () => ((await activitySlotsUsed(worker)) === 0 ? true : undefined),
    timeoutMs,
  );
}

/**
 * Waits for a moment on the wall clock. Only for faults that must land in a time window the
 * workflow's own timer defines (the max_seconds deadline); there is no event to await before it.
 */
export async function untilWallClock(ms: number): Promise<void> {
  const wait = ms - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

// ---- one fault for several runs ---------------------------------------------------------------

/**
 * N cells arrive; when the last one is in (or has failed and left), the fault runs once and every
 * cell goes on. A cell that fails before arriving calls leave(), so the others are not stuck.
 */
export class Barrier {
  private arrived = 0;
  private readonly done: Promise<void>;
  private fire!: () => void;

  constructor(
    private readonly size: number,
    fault: () => Promise<void>,
  ) {
    const go = new Promise<void>((resolve) => (this.fire = resolve));
    this.done = go.then(fault);
    this.done.catch(() => undefined); // observed by every arrive()
  }

  arrive(): Promise<void> {
    this.count();
    return this.done;
  }

  leave(): void {
    this.count();
  }

  private count(): void {
    this.arrived++;
    if (this.arrived === this.size) this.fire();
  }
}

// ---- shared assertions ------------------------------------------------------------------------

/**
 * The run's effects list against the refunds database (the system of record):
 * confirmed <=> exactly one confirmed row with that key and its id; not_made <=> no confirmed row
 * (none at all, or one voided by the reconcile); rejected <=> a row the service refused. And no
 * row of this run is missing from the list.
 */
export function assertEffectsMatchDb(
  result: AgentResult,
  rows: RefundRecord[],
  expected: EffectOutcome[],
  amountUsd = 49,
): void {
  assert.ok(result.effects, `the result carries an effects list (stop_reason ${result.stop_reason})`);
  const effects = result.effects;
  assert.deepEqual(
    effects.map((e) => e.state),
    expected,
    `effects ${JSON.stringify(effects)} / refund rows ${JSON.stringify(rows.map((r) => [r.idempotency_key, r.state, r.rejection]))}`,
  );
  for (const e of effects) {
    assert.equal(e.tool, 'issue_refund');
    assert.equal(e.amount_usd, amountUsd);
    const mine = rows.filter((r) => r.idempotency_key === e.idempotency_key);
    if (e.state === 'confirmed') {
      assert.equal(mine.length, 1, `one row for ${e.idempotency_key}`);
      assert.equal(mine[0]!.state, 'confirmed');
      assert.equal(e.refund_id, mine[0]!.id, 'the effect names the confirmed row');
    } else if (e.state === 'not_made') {
      assert.ok(
        mine.every((r) => r.state === 'rejected' && r.rejection === VOIDED),
        `no money moved for ${e.idempotency_key}: ${JSON.stringify(mine)}`,
      );
    } else if (e.state === 'rejected') {
      assert.ok(mine.length === 1 && mine[0]!.state === 'rejected' && mine[0]!.rejection !== VOIDED);
    }
  }
  const keys = new Set(effects.map((e) => e.idempotency_key));
  assert.deepEqual(
    rows.filter((r) => !keys.has(r.idempotency_key)),
    [],
    'every refund row of the run is in its effects list',
  );
  assert.equal(
    rows.filter((r) => r.state === 'confirmed').length,
    expected.filter((s) => s === 'confirmed').length,
    'confirmed rows',
  );
}

export interface AfterCut {
  /** When the server recorded the cancel request (or the deadline timer fired), epoch ms. */
  atMs: number;
  /** Activity types scheduled after it. */
  scheduled: string[];
  /** Model requests received after it. */
  llmRequests: RecordedRequest[];
  /** Refund rows created after it. */
  rows: RefundRecord[];
}

/** What happened after the cut (the cancel request, or the budget timer firing) in the latest run. */
export function afterCut(
  events: HistoryEvent[],
  cut: HistoryEvent,
  requests: RecordedRequest[],
  rows: RefundRecord[],
): AfterCut {
  const atMs = eventTimeMs(cut);
  const index = events.indexOf(cut);
  return {
    atMs,
    // A local activity (a read-only tool) that completed after the cut ran after it too.
    scheduled: events.slice(index).flatMap((e) => {
      const local = e.markerRecordedEventAttributes?.failure ? undefined : localActivityType(e);
      const name = e.activityTaskScheduledEventAttributes?.activityType?.name ?? local;
      return name ? [name] : [];
    }),
    llmRequests: requests.filter((r) => r.receivedAt > atMs),
    rows: rows.filter(
      (r) =>
        Date.parse(r.created_at) > atMs ||
        (r.state === 'confirmed' && r.cancel_checked_at !== null && Date.parse(r.cancel_checked_at) > atMs),
    ),
  };
}

/** Nothing happened after the cut but the reconcile: no activity scheduled, no model request, no refund row. */
export function assertNothingAfter(cut: AfterCut, what: string): void {
  assert.deepEqual(
    cut.scheduled.filter((n) => n !== 'reconcile_issue_refund'),
    [],
    `activities scheduled after ${what}`,
  );
  assert.deepEqual(
    cut.llmRequests.map((r) => `${r.idempotencyKey} at +${r.receivedAt - cut.atMs} ms`),
    [],
    `model requests after ${what}`,
  );
  assert.deepEqual(
    cut.rows.map((r) => r.idempotency_key),
    [],
    `refund rows created, or confirmed on a cancel check asked, after ${what}`,
  );
}

/** One line per event after `fromMs`, for failure messages about timing (which worker, which timeout). */
export function timeline(events: HistoryEvent[], fromMs: number): string {
  return events
    .filter((e) => eventTimeMs(e) >= fromMs - 1)
    .map((e) => {
      const kind =
        Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]) ?? '?';
      const attrs = (e as Record<string, { identity?: string; activityType?: { name?: string } } | undefined>)[kind];
      return `+${eventTimeMs(e) - fromMs}ms ${kind.replace('EventAttributes', '')}${attrs?.activityType?.name ? ` ${attrs.activityType.name}` : ''}${attrs?.identity ? ` (${attrs.identity})` : ''}`;
    })
    .join('\n');
}
