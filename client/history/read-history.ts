// The one reader of a run's workflow history: the events of a run (and of the runs it continued
// as new from) become, once, a list of what happened at each step, in history order, with every
// payload decoded: the loop's activities (which step, which role, its input, its result or how it
// failed, its attempts), the approvals a person gave, how the run closed and its result.
// `agent trace` (trace.ts) and the evaluation's run record (eval/run-record.ts) are views over it.
//
// Which step an activity belongs to is what the workflow recorded in its input (its step tag,
// common/temporal/step-tag.ts); histories recorded before the tag existed are read by the legacy
// activity-id convention, and their activities are marked `tagged: false`.
import type { Payload } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils';
import { tsToMs } from '@temporalio/common/lib/time';
import { stepTagOf } from '../../common/temporal/step-tag';
import type { StepTag } from '../../common/temporal/step-tag';
import { CANCELLED_RESULT_MEMO } from '../../common/types';
import type { AgentInput, AgentResult, Observation } from '../../common/types';
import { LOCAL_ACTIVITY_MARKER, localCallOf, withoutLocalCall } from '../../common/temporal/local-call';
import type { ApprovalAnswer, ApprovalReceipt } from '../../common/conversation/approvals';

export type HistoryEvent = NonNullable<History['events']>[number];
type Payloads = Payload[] | null | undefined;

/** Decodes the value at `index` of a payload list (the client's data converter, codec included). */
export type DecodePayloads = (payloads: Payloads, index?: number) => Promise<unknown>;

/** One of the loop's activities: a decision, a tool call, or a reconcile lookup. */
export interface ActivityRecord {
  step: number;
  role: StepTag['role'];
  /** The activity type: decide, a tool's name, reconcile_<tool>. */
  name: string;
  /** The step tag came from the activity's input (false: a legacy history's activity id). */
  tagged: boolean;
  input: unknown;
  scheduledAtMs: number;
  /** The attempt that reported last (1 = no retry). */
  attempts: number;
  /** A local activity (a read-only tool call recorded as a marker): no scheduled event of its own. */
  local?: boolean;
}

export type ActivityEnd = 'failed' | 'timed_out' | 'cancelled';

/** What happened, in history order. */
export type StepEntry =
  | { kind: 'scheduled'; atMs: number; activity: ActivityRecord }
  | { kind: 'completed'; atMs: number; activity: ActivityRecord; result: unknown }
  | {
      kind: 'ended';
      atMs: number;
      activity: ActivityRecord;
      how: ActivityEnd;
      /** A failure's message (how = failed). */
      message?: string;
      /** A decision's failure details (the attempts it was charged for), decoded. */
      details?: unknown;
    }
  /** A person's answer to a pending call or escalation (not a repeat that changed nothing). */
  | { kind: 'approval'; atMs: number; receipt: ApprovalReceipt & { pending: object }; answer?: ApprovalAnswer };

export interface RunHistory {
  workflowId: string;
  /** The chain's runs, oldest first. */
  runIds: string[];
  /** The first run's input and when it started. */
  input?: AgentInput;
  startedAtMs?: number;
  entries: StepEntry[];
  /** The latest run's Temporal status: RUNNING, COMPLETED, CANCELLED, FAILED, TERMINATED, TIMED_OUT, CONTINUED_AS_NEW. */
  temporalStatus: string;
  closedAtMs?: number;
  cancelRequestedAtMs?: number;
  /** The result the close event carries, or the one a cancelled run wrote to its memo. */
  result?: AgentResult;
}

/** `chain`: the runs of one workflow id, oldest first (one entry unless it continued as new). */
export async function readRunHistory(
  workflowId: string,
  chain: ReadonlyArray<{ runId?: string; events: HistoryEvent[] }>,
  decode: DecodePayloads,
): Promise<RunHistory> {
  const history: RunHistory = {
    workflowId,
    runIds: chain.map((run) => run.runId ?? ''),
    entries: [],
    temporalStatus: 'RUNNING',
  };
  for (const { events } of chain) {
    const run = new RunReader(history, decode);
    for (const e of events) await run.read(e);
  }
  return history;
}

type Attributes<K extends keyof HistoryEvent> = NonNullable<HistoryEvent[K]>;

/** One run of the chain, read into `history`: event ids (of activities, of Updates) are the run's own. */
class RunReader {
  private readonly scheduled = new Map<string, ActivityRecord>();
  private readonly updateInputs = new Map<string, Payloads>();
  /** The step of the last decision scheduled: a local tool call without its echo belongs to it. */
  private lastDecideStep: number | undefined;
  private lastDecideTagged = false;

  constructor(
    private readonly history: RunHistory,
    private readonly decode: DecodePayloads,
  ) {}

  async read(e: HistoryEvent): Promise<void> {
    const atMs = tsToMs(e.eventTime);
    const id = String(e.eventId ?? '');
    if (e.workflowExecutionStartedEventAttributes)
      return this.runStarted(e.workflowExecutionStartedEventAttributes, atMs);
    if (e.activityTaskScheduledEventAttributes)
      return this.activityScheduled(e.activityTaskScheduledEventAttributes, id, atMs);
    if (e.activityTaskStartedEventAttributes) return this.attemptStarted(e.activityTaskStartedEventAttributes);
    if (e.activityTaskCompletedEventAttributes)
      return this.activityCompleted(e.activityTaskCompletedEventAttributes, atMs);
    if (
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes
    )
      return this.activityEnded(e, atMs);
    if (e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER)
      return this.localActivity(e.markerRecordedEventAttributes, id, atMs);
    if (e.workflowExecutionUpdateAcceptedEventAttributes) {
      this.updateInputs.set(
        id,
        e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.args?.payloads,
      );
      return;
    }
    const updated = e.workflowExecutionUpdateCompletedEventAttributes;
    if (updated?.outcome?.success) return this.updateCompleted(updated, updated.outcome.success.payloads, atMs);
    if (e.workflowExecutionCancelRequestedEventAttributes) {
      this.history.cancelRequestedAtMs ??= atMs;
      return;
    }
    return this.runClosing(e, atMs);
  }

  private async runStarted(
    started: Attributes<'workflowExecutionStartedEventAttributes'>,
    atMs: number,
  ): Promise<void> {
    if (this.history.input === undefined) {
      this.history.input = (await this.decode(started.input?.payloads)) as AgentInput;
      this.history.startedAtMs = atMs;
    }
    this.history.temporalStatus = 'RUNNING';
  }

  private async activityScheduled(
    sched: Attributes<'activityTaskScheduledEventAttributes'>,
    id: string,
    atMs: number,
  ): Promise<void> {
    const name = sched.activityType?.name ?? '?';
    const input = await this.decode(sched.input?.payloads);
    const own = stepTagOf(input);
    const tag = own ?? legacyStepTag(name, sched.activityId);
    if (tag === undefined) return; // not one of the loop's activities
    const activity: ActivityRecord = {
      step: tag.step,
      role: tag.role,
      name,
      tagged: own !== undefined,
      input,
      scheduledAtMs: atMs,
      attempts: 1,
    };
    this.scheduled.set(id, activity);
    if (tag.role === 'decide') {
      this.lastDecideStep = tag.step;
      this.lastDecideTagged = own !== undefined;
    }
    this.history.entries.push({ kind: 'scheduled', atMs, activity });
  }

  /**
   * A local activity (a read-only tool call): one marker with its result or its failure, no input.
   * Its step tag and arguments are in the result's echo (common/temporal/local-call.ts); a failed
   * one has no result, and belongs to the step of the last decision read.
   */
  private async localActivity(
    marker: Attributes<'markerRecordedEventAttributes'>,
    id: string,
    atMs: number,
  ): Promise<void> {
    const data = localActivityData(marker.details?.data?.payloads);
    const name = data.activityType ?? '?';
    const result = marker.failure ? undefined : await this.decode(marker.details?.result?.payloads);
    const echo = localCallOf(result);
    const tag =
      echo?.trace ??
      (this.lastDecideStep !== undefined ? { step: this.lastDecideStep, role: 'tool' as const } : undefined);
    if (tag === undefined) return;
    const activity: ActivityRecord = {
      step: tag.step,
      role: tag.role,
      name,
      tagged: echo !== undefined || this.lastDecideTagged,
      input: {
        args: echo?.args ?? {},
        ...(echo?.idempotency_key ? { idempotency_key: echo.idempotency_key } : {}),
        trace: tag,
      },
      // The marker's own time: the SDK's original_schedule_time is taken on another clock (it can
      // come after complete_time), so a local call is placed where the workflow task recorded it.
      scheduledAtMs: atMs,
      attempts: data.attempt ?? 1,
      local: true,
    };
    this.scheduled.set(`local-${id}`, activity);
    this.history.entries.push({ kind: 'scheduled', atMs: activity.scheduledAtMs, activity });
    if (marker.failure) {
      const cancelled = marker.failure.canceledFailureInfo !== undefined && marker.failure.canceledFailureInfo !== null;
      const timedOut = marker.failure.timeoutFailureInfo ?? marker.failure.cause?.timeoutFailureInfo;
      const how: ActivityEnd = cancelled ? 'cancelled' : timedOut ? 'timed_out' : 'failed';
      const message = marker.failure.cause?.message ?? marker.failure.message ?? 'unknown error';
      this.history.entries.push({ kind: 'ended', atMs, activity, how, ...(how === 'failed' ? { message } : {}) });
      return;
    }
    this.history.entries.push({ kind: 'completed', atMs, activity, result: withoutLocalCall(result as Observation) });
  }

  private attemptStarted(taskStarted: Attributes<'activityTaskStartedEventAttributes'>): void {
    const activity = this.scheduled.get(String(taskStarted.scheduledEventId ?? ''));
    if (activity) activity.attempts = Math.max(activity.attempts, taskStarted.attempt ?? 1);
  }

  private async activityCompleted(
    completed: Attributes<'activityTaskCompletedEventAttributes'>,
    atMs: number,
  ): Promise<void> {
    const activity = this.scheduled.get(String(completed.scheduledEventId ?? ''));
    if (activity)
      this.history.entries.push({
        kind: 'completed',
        atMs,
        activity,
        result: await this.decode(completed.result?.payloads),
      });
  }

  /** An activity that failed, timed out or was cancelled. */
  private async activityEnded(e: HistoryEvent, atMs: number): Promise<void> {
    const ended =
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    const activity = this.scheduled.get(String(ended?.scheduledEventId ?? ''));
    if (!activity) return;
    const failure = e.activityTaskFailedEventAttributes?.failure;
    const how: ActivityEnd = e.activityTaskFailedEventAttributes
      ? 'failed'
      : e.activityTaskTimedOutEventAttributes
        ? 'timed_out'
        : 'cancelled';
    const details = failure?.applicationFailureInfo?.details?.payloads;
    this.history.entries.push({
      kind: 'ended',
      atMs,
      activity,
      how,
      ...(how === 'failed' ? { message: failure?.message ?? 'unknown error' } : {}),
      ...(details && activity.role === 'decide' ? { details: await this.decode(details) } : {}),
    });
  }

  /** A completed Update: an approval when its result is a receipt that changed something. */
  private async updateCompleted(
    updated: Attributes<'workflowExecutionUpdateCompletedEventAttributes'>,
    result: Payloads,
    atMs: number,
  ): Promise<void> {
    const receipt = (await this.decode(result)) as ApprovalReceipt | undefined;
    if (!receipt?.pending || receipt.duplicate) return; // not an approval, or a repeat that changed nothing
    const answer = (await this.decode(this.updateInputs.get(String(updated.acceptedEventId ?? '')))) as
      ApprovalAnswer | undefined;
    this.history.entries.push({
      kind: 'approval',
      atMs,
      receipt: receipt as ApprovalReceipt & { pending: object },
      ...(answer ? { answer } : {}),
    });
  }

  /** How the run closed, and its result (a cancelled run writes its result to its memo first). */
  private async runClosing(e: HistoryEvent, atMs: number): Promise<void> {
    const memo = e.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields?.[CANCELLED_RESULT_MEMO];
    if (memo) {
      this.history.result = (await this.decode([memo])) as AgentResult;
      return;
    }
    const closedCompleted = e.workflowExecutionCompletedEventAttributes;
    if (closedCompleted) {
      this.history.temporalStatus = 'COMPLETED';
      this.history.closedAtMs = atMs;
      this.history.result = (await this.decode(closedCompleted.result?.payloads)) as AgentResult;
      return;
    }
    const status = closedStatus(e);
    if (status) {
      this.history.temporalStatus = status;
      if (status !== 'CONTINUED_AS_NEW') this.history.closedAtMs = atMs;
    }
  }
}

/** What the SDK's core records of a local activity besides its result (its `data` detail, plain JSON). */
function localActivityData(payloads: Payloads): { activityType?: string; attempt?: number } {
  const payload = payloads?.[0];
  if (!payload?.data) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload.data).toString('utf8'));
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null) return {};
  const data = parsed as Record<string, unknown>;
  const type = data.activity_type ?? data.activityType;
  const attempt = data.attempt;
  return {
    ...(typeof type === 'string' ? { activityType: type } : {}),
    ...(typeof attempt === 'number' && Number.isSafeInteger(attempt) && attempt > 0 ? { attempt } : {}),
  };
}

function closedStatus(e: HistoryEvent): string | undefined {
  if (e.workflowExecutionCanceledEventAttributes) return 'CANCELLED';
  if (e.workflowExecutionFailedEventAttributes) return 'FAILED';
  if (e.workflowExecutionTerminatedEventAttributes) return 'TERMINATED';
  if (e.workflowExecutionTimedOutEventAttributes) return 'TIMED_OUT';
  if (e.workflowExecutionContinuedAsNewEventAttributes) return 'CONTINUED_AS_NEW';
  return undefined;
}

/**
 * LEGACY: histories recorded before activity inputs carried a step tag. Their activity ids were
 * `${step}-decide` and `${step}-${tool}` (and `${step}-reconcile-${tool}`, read as a tool then).
 */
function legacyStepTag(activityType: string, activityId: string | null | undefined): StepTag | undefined {
  const match = /^(\d+)-/.exec(activityId ?? '');
  if (!match) return undefined;
  return { step: Number(match[1]), role: activityType === 'decide' ? 'decide' : 'tool' };
}
