// A tool (common/tools/<name>.ts) as a Temporal activity: its arguments checked again against the
// tool's schema, and its handler given a ToolContext built from the activity's Context. This is
// the only place a tool meets the activity SDK, the refunds database or the envelope's Buffer.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { temporal } from '@temporalio/proto';
import type { RefundFaults } from '../../common/tools/refund-ledger';
import type { DataSource } from '../../common/tools/support-data';
import type { ToolContext, ToolDefinition } from '../../common/tools/tool';
import type { Observation, ToolInput } from '../../common/types';
import { envelope } from '../envelope';
import type { RefundService } from '../refunds/service';

export type ToolFn = (input: ToolInput) => Promise<Observation>;

export interface ToolDeps {
  data: DataSource;
  refunds: () => RefundService;
  faults: RefundFaults;
}

export const HEARTBEAT_EVERY_MS = 250;

/** The activity that runs `tool`, registered under the tool's name. */
export function toolActivity(tool: ToolDefinition, deps: ToolDeps): ToolFn {
  // A named function expression keeps the activity's registered name and stack traces readable.
  return {
    [tool.name]: async (input: ToolInput): Promise<Observation> => {
      const parsed = tool.args.safeParse(input.args);
      // The workflow's gateway checked the schema first; reaching this is a bug, not a retryable outage.
      if (!parsed.success) throw ApplicationFailure.nonRetryable(`${tool.name}: malformed arguments`, 'ToolBadArgs');
      const activity = Context.current();
      // A read-only tool beats while it runs, so an attempt on a hung worker is noticed at the
      // heartbeat timeout, not at its start-to-close. An effect beats itself, with its progress.
      const beat = tool.effectful ? undefined : setInterval(() => activity.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        return await tool.handler(parsed.data, toolContext(tool.name, deps, activity), input);
      } finally {
        clearInterval(beat);
      }
    },
  }[tool.name]!;
}

function toolContext(name: string, deps: ToolDeps, activity: Context): ToolContext {
  const execution = activity.info.workflowExecution;
  return {
    data: deps.data,
    refunds: deps.refunds,
    faults: deps.faults,
    envelope: (source, ok, data) => envelope(name, source, ok, data),
    attempt: activity.info.attempt,
    workflowId: execution?.workflowId ?? '',
    startHeartbeats: (details) => {
      const beat = setInterval(() => activity.heartbeat(details()), HEARTBEAT_EVERY_MS);
      return () => clearInterval(beat);
    },
    stall: (ms) => sleepUnlessAborted(ms, activity.cancellationSignal),
    cancellationSignal: activity.cancellationSignal,
    runCancelRequested: async () => {
      if (!execution) return false;
      const { client } = activity;
      const description = await client.workflowService.describeWorkflowExecution({
        namespace: client.options.namespace,
        execution: { workflowId: execution.workflowId, runId: execution.runId },
      });
      // The run's cancel, or this call's: a deadline cancels the activity, not the run, and a retry
      // started after its predecessor's heartbeat timeout may not have heard of it yet.
      const mine = description.pendingActivities?.find((a) => a.activityId === activity.info.activityId);
      return (
        description.workflowExtendedInfo?.cancelRequested === true ||
        mine?.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED
      );
    },
  };
}

/** Waits ms, or less when the signal aborts first (a cancelled activity, a worker shutting down). */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
