// What the evaluation knows about one run, a view over its Temporal history alone (the run's
// steps as client/history/read-history.ts reads them, and the result the close event carries):
// never from the scenario's script. Pure: the payload decoder is passed in, so the unit tests feed
// hand-made histories.
import { readRunHistory } from '../client/history/read-history';
import type { ActivityRecord, DecodePayloads, HistoryEvent, RunHistory } from '../client/history/read-history';
import { digest } from '../client/history/trace';
import { validateAction } from '../common/contract';
import type { AgentInput, AgentResult, DecideOutput, Observation } from '../common/types';

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

/** `chain`: the runs of one workflow id, oldest first. */
export async function readRunRecord(
  workflowId: string,
  chain: ReadonlyArray<{ events: HistoryEvent[] }>,
  decode: DecodePayloads,
): Promise<RunRecord> {
  return runRecordOf(await readRunHistory(workflowId, chain, decode));
}

/** The evaluation's view of a run's history: its decisions, tool calls and reconcile lookups. */
export function runRecordOf(history: RunHistory): RunRecord {
  if (history.input === undefined) throw new Error(`history of ${history.workflowId} has no start event`);
  const record: RunRecord = {
    workflowId: history.workflowId,
    input: history.input,
    startedAtMs: history.startedAtMs ?? 0,
    // The chain's latest run continued as new: its next run has not started yet.
    temporalStatus: history.temporalStatus === 'CONTINUED_AS_NEW' ? 'RUNNING' : history.temporalStatus,
    ...(history.closedAtMs !== undefined ? { closedAtMs: history.closedAtMs } : {}),
    decisions: [],
    calls: [],
    reconciles: [],
    ...(history.cancelRequestedAtMs !== undefined ? { cancelRequestedAtMs: history.cancelRequestedAtMs } : {}),
    ...(history.result !== undefined ? { result: history.result } : {}),
    tokens: 0,
  };
  const calls = new Map<ActivityRecord, ToolCallRecord>();
  for (const entry of history.entries) {
    // Legacy histories (no step tag in the inputs) predate the evaluation.
    if (entry.kind === 'approval' || !entry.activity.tagged) continue;
    const { activity } = entry;
    if (entry.kind === 'scheduled') {
      if (activity.role === 'reconcile') record.reconciles.push(activity.name.replace(/^reconcile_/, ''));
      if (activity.role !== 'tool') continue;
      const args = (activity.input as { args?: Record<string, unknown> } | undefined)?.args ?? {};
      const call: ToolCallRecord = {
        step: activity.step,
        tool: activity.name,
        args,
        digest: digest(args),
        attempts: 1,
        outcome: 'pending',
        scheduledAtMs: activity.scheduledAtMs,
      };
      record.calls.push(call);
      calls.set(activity, call);
      continue;
    }
    if (entry.kind === 'completed' && activity.role === 'decide') {
      const output = entry.result as DecideOutput;
      record.tokens += output?.usage?.total_tokens ?? 0;
      record.decisions.push(decisionOf(activity.step, output?.text ?? ''));
      continue;
    }
    const call = calls.get(activity);
    if (!call) continue;
    if (entry.kind === 'completed') {
      call.observation = entry.result as Observation;
      call.outcome = call.observation?.ok ? 'ok' : 'error';
    } else call.outcome = entry.how;
  }
  for (const [activity, call] of calls) call.attempts = activity.attempts;
  return record;
}

function decisionOf(step: number, text: string): DecisionRecord {
  const v = validateAction(text);
  if (!v.ok) return { step, kind: 'invalid' };
  const a = v.action;
  if (a.kind === 'final') return { step, kind: 'final', answer: a.answer };
  if (a.kind === 'escalate') return { step, kind: 'escalate' };
  // Not parsed as a message here (the eval's runs are not conversations): never reached.
  if (a.kind === 'message') return { step, kind: 'invalid' };
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
