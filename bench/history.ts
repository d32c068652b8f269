// History cost of a run: events and bytes, per run of a continue-as-new chain and per step.
// Bytes are the protobuf size of each HistoryEvent as the server returns it (payloads as stored,
// so codec-encoded when a codec is in use); the server's own per-run count (historySizeBytes from
// DescribeWorkflowExecution) is reported beside it as a cross-check.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface RunCost {
  runId: string;
  /** first and last step this run executed */
  firstStep: number;
  lastStep: number;
  events: number;
  bytes: number;
  /** server's own accounting (DescribeWorkflowExecution.historySizeBytes) */
  serverBytes: number | undefined;
  /** WorkflowExecutionStarted: the input, incl. the state carried over by continue-as-new */
  startEventBytes: number;
  /** the closing event: the result (with trace and history) or the continue-as-new input */
  closeEventBytes: number;
  closeType: string;
}

export interface StepCost {
  step: number;
  events: number;
  bytes: number;
  /** bytes of the decide ActivityTaskScheduled event: the bounded decision payload */
  decideInputBytes: number;
}

export interface ChainCost {
  runs: RunCost[];
  steps: Map<number, StepCost>;
}

export function eventBytes(e: HistoryEvent): number {
  return temporal.api.history.v1.HistoryEvent.encode(e).finish().length;
}

const CLOSE_KEYS = [
  'workflowExecutionCompletedEventAttributes',
  'workflowExecutionContinuedAsNewEventAttributes',
  'workflowExecutionFailedEventAttributes',
  'workflowExecutionCanceledEventAttributes',
  'workflowExecutionTerminatedEventAttributes',
  'workflowExecutionTimedOutEventAttributes',
] as const;

function closeType(e: HistoryEvent): string | undefined {
  for (const k of CLOSE_KEYS) if (e[k]) return k.replace(/^workflowExecution/, '').replace(/EventAttributes$/, '');
  return undefined;
}

/** Step of a decide ActivityTaskScheduled event (activity id `<step>-decide`), else undefined. */
function decideStep(e: HistoryEvent): number | undefined {
  const a = e.activityTaskScheduledEventAttributes;
  if (!a?.activityId) return undefined;
  const m = /^(\d+)-decide$/.exec(a.activityId);
  return m ? Number(m[1]) : undefined;
}

/**
 * Walks the continue-as-new chain of a workflow from its first run and attributes every event to
 * a step: step k owns the events from its decide being scheduled up to the next decide being
 * scheduled (its tool call and the workflow tasks in between). The run's opening events and its
 * close event are counted per run, not per step.
 */
export async function chainCost(client: Client, workflowId: string, firstRunId: string): Promise<ChainCost> {
  const runs: RunCost[] = [];
  const steps = new Map<number, StepCost>();
  let runId: string | undefined = firstRunId;
  while (runId) {
    const handle = client.workflow.getHandle(workflowId, runId);
    const history = await handle.fetchHistory();
    const description = await handle.describe();
    const events = history.events ?? [];
    let current: StepCost | undefined;
    let first = Infinity;
    let last = 0;
    let bytes = 0;
    let startEventBytes = 0;
    let closeEventBytes = 0;
    let close = 'open';
    let next: string | undefined;
    for (const e of events) {
      const size = eventBytes(e);
      bytes += size;
      if (e.workflowExecutionStartedEventAttributes) startEventBytes = size;
      const ct = closeType(e);
      if (ct) {
        closeEventBytes = size;
        close = ct;
        next = e.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
        continue;
      }
      const step = decideStep(e);
      if (step !== undefined) {
        current = { step, events: 0, bytes: 0, decideInputBytes: size };
        steps.set(step, current);
        first = Math.min(first, step);
        last = Math.max(last, step);
      }
      if (current) {
        current.events += 1;
        current.bytes += size;
      }
    }
    runs.push({
      runId,
      firstStep: first === Infinity ? 0 : first,
      lastStep: last,
      events: events.length,
      bytes,
      serverBytes: description.historySize,
      startEventBytes,
      closeEventBytes,
      closeType: close,
    });
    runId = next;
  }
  return { runs, steps };
}
