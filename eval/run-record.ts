// What the evaluation knows about one run, read from its Temporal history alone (and the result
// the history's close event carries): never from the scenario's script. Pure: the payload decoder
// is passed in, so the unit tests feed hand-made histories.
import { tsToMs } from '@temporalio/common/lib/time';
import type { DecodePayloads, HistoryEvent } from '../client/history-trace';
import { digest } from '../client/history-trace';
import { validateAction } from '../common/contract';
import { stepTagOf } from '../common/step-tag';
import type { AgentInput, AgentResult, DecideOutput, Observation } from '../common/types';
import { CANCELLED_RESULT_MEMO } from '../common/types';

export interface DecisionRecord {
  step: number;
  kind: 'tool' | 'final' | 'escalate' | 'invalid';
  tool?: string;
  args?: Record<string, unknown>;
  /** sha256 of the arguments (tool calls) */
  digest?: string;
  answer?: string;
}

export type CallOutcome = 'ok' | 'error' | 'failed' | 'timed_out' | 'cancelled' | 'pending';

export interface ToolCallRecord {
  step: number;
  tool: string;
  args: Record<string, unknown>;
  digest: string;
  /** The attempt that reported last (1 = no retry). */
  attempts: number;
  outcome: CallOutcome;
  observation?: Observation;
  scheduledAtMs: number;
}

export interface RunRecord {
  workflowId: string;
  input: AgentInput;
  startedAtMs: number;
  closedAtMs?: number;
  /** COMPLETED, CANCELLED, FAILED, TERMINATED, TIMED_OUT, RUNNING */
  temporalStatus: string;
  decisions: DecisionRecord[];
  calls: ToolCallRecord[];
  /** The reconcile lookups the run made (reconcile_<tool>), by the tool they reconcile. */
  reconciles: string[];
  cancelRequestedAtMs?: number;
  result?: AgentResult;
  tokens: number;
}

interface Pending {
  kind: 'decide' | 'tool' | 'reconcile';
  step: number;
  call?: ToolCallRecord;
}

/** `chain`: the runs of one workflow id, oldest first. */
export async function readRunRecord(
  workflowId: string,
  chain: ReadonlyArray<{ events: HistoryEvent[] }>,
  decode: DecodePayloads,
): Promise<RunRecord> {
  const record: RunRecord = {
    workflowId,
    input: undefined as unknown as AgentInput,
    startedAtMs: 0,
    temporalStatus: 'RUNNING',
    decisions: [],
    calls: [],
    reconciles: [],
    tokens: 0,
  };
  for (const { events } of chain) {
    const scheduled = new Map<string, Pending>();
    for (const e of events) {
      const atMs = tsToMs(e.eventTime);
      const started = e.workflowExecutionStartedEventAttributes;
      if (started) {
        if (record.input === undefined) {
          record.input = (await decode(started.input?.payloads)) as AgentInput;
          record.startedAtMs = atMs;
        }
        record.temporalStatus = 'RUNNING';
        continue;
      }
      const sched = e.activityTaskScheduledEventAttributes;
      if (sched) {
        const name = sched.activityType?.name ?? '?';
        const input = (await decode(sched.input?.payloads)) as { args?: Record<string, unknown> } | undefined;
        const tag = stepTagOf(input);
        if (!tag) continue;
        const id = String(e.eventId ?? '');
        if (tag.role === 'decide') scheduled.set(id, { kind: 'decide', step: tag.step });
        else if (tag.role === 'reconcile') {
          scheduled.set(id, { kind: 'reconcile', step: tag.step });
          record.reconciles.push(name.replace(/^reconcile_/, ''));
        } else {
          const args = input?.args ?? {};
          const call: ToolCallRecord = {
            step: tag.step,
            tool: name,
            args,
            digest: digest(args),
            attempts: 1,
            outcome: 'pending',
            scheduledAtMs: atMs,
          };
          record.calls.push(call);
          scheduled.set(id, { kind: 'tool', step: tag.step, call });
        }
        continue;
      }
      const taskStarted = e.activityTaskStartedEventAttributes;
      if (taskStarted) {
        const call = scheduled.get(String(taskStarted.scheduledEventId ?? ''))?.call;
        if (call) call.attempts = Math.max(call.attempts, taskStarted.attempt ?? 1);
        continue;
      }
      const completed = e.activityTaskCompletedEventAttributes;
      if (completed) {
        const s = scheduled.get(String(completed.scheduledEventId ?? ''));
        if (!s) continue;
        const value = await decode(completed.result?.payloads);
        if (s.kind === 'decide') {
          const output = value as DecideOutput;
          record.tokens += output?.usage?.total_tokens ?? 0;
          record.decisions.push(decisionOf(s.step, output?.text ?? ''));
        } else if (s.call) {
          s.call.observation = value as Observation;
          s.call.outcome = s.call.observation?.ok ? 'ok' : 'error';
        }
        continue;
      }
      const failed =
        e.activityTaskFailedEventAttributes ??
        e.activityTaskTimedOutEventAttributes ??
        e.activityTaskCanceledEventAttributes;
      if (failed) {
        const call = scheduled.get(String(failed.scheduledEventId ?? ''))?.call;
        if (call)
          call.outcome = e.activityTaskFailedEventAttributes
            ? 'failed'
            : e.activityTaskTimedOutEventAttributes
              ? 'timed_out'
              : 'cancelled';
        continue;
      }
      if (e.workflowExecutionCancelRequestedEventAttributes) {
        record.cancelRequestedAtMs ??= atMs;
        continue;
      }
      const memo = e.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields?.[CANCELLED_RESULT_MEMO];
      if (memo) {
        record.result = (await decode([memo])) as AgentResult;
        continue;
      }
      const closed = e.workflowExecutionCompletedEventAttributes;
      if (closed) {
        record.temporalStatus = 'COMPLETED';
        record.closedAtMs = atMs;
        record.result = (await decode(closed.result?.payloads)) as AgentResult;
        continue;
      }
      const status = e.workflowExecutionCanceledEventAttributes
        ? 'CANCELLED'
        : e.workflowExecutionFailedEventAttributes
          ? 'FAILED'
          : e.workflowExecutionTerminatedEventAttributes
            ? 'TERMINATED'
            : e.workflowExecutionTimedOutEventAttributes
              ? 'TIMED_OUT'
              : undefined;
      if (status) {
        record.temporalStatus = status;
        record.closedAtMs = atMs;
      }
    }
  }
  if (record.input === undefined) throw new Error(`history of ${workflowId} has no start event`);
  return record;
}

function decisionOf(step: number, text: string): DecisionRecord {
  const v = validateAction(text);
  if (!v.ok) return { step, kind: 'invalid' };
  const a = v.action;
  if (a.kind === 'final') return { step, kind: 'final', answer: a.answer };
  if (a.kind === 'escalate') return { step, kind: 'escalate' };
  const args = a.args ?? {};
  return { step, kind: 'tool', tool: a.name, args, digest: digest(args) };
}

/** The run's stop reason: the result's, or `cancelled` for a run cancelled before it wrote one. */
export function stopReasonOf(record: RunRecord): string | undefined {
  return record.result?.stop_reason ?? (record.temporalStatus === 'CANCELLED' ? 'cancelled' : undefined);
}

/**
 * The answer the run returned (its result's), which is what is scored: not the first final decision
 * in the history, which the final validator may have bounced. None for a run that stopped without one.
 */
export function answerOf(record: RunRecord): string | undefined {
  return record.result?.answer;
}
