// A domain's tool (domains/<name>/tools/) as a Temporal activity: its arguments checked again
// against the tool's schema, and its handler given a ToolContext built from the activity's Context
// and the domain's services. This is the only place a tool meets the activity SDK, its services or
// the envelope's Buffer. A tool's reconcile hook becomes the activity `reconcile_<name>`.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { EffectFaults, ToolContext, ToolDefinition } from '../../common/tools/tool';
import type { Observation, ReconcileInput, ReconcileOutput, ToolInput } from '../../common/types';
import { envelope } from './envelope';
import { withLocalCall } from '../../common/temporal/local-call';
import { TOOL_BAD_ARGS } from '../../common/agent-messages';

export type ToolFn = (input: ToolInput) => Promise<Observation>;
export type ReconcileFn = (input: ReconcileInput) => Promise<ReconcileOutput>;
export type OwnerFn = (input: { args: Record<string, unknown> }) => Promise<string | null>;

export interface ToolDeps<Services> {
  services: Services;
  faults: EffectFaults;
}

export const HEARTBEAT_EVERY_MS = 250;

/** The activity that runs `tool`, registered under the tool's name. */
export function toolActivity<Services>(tool: ToolDefinition<Services>, deps: ToolDeps<Services>): ToolFn {
  // A named function expression keeps the activity's registered name and stack traces readable.
  return {
    [tool.name]: async (input: ToolInput): Promise<Observation> => {
      const parsed = tool.args.safeParse(input.args);
      // The workflow's gateway checked the schema first; reaching this is a bug, not a retryable outage.
      if (!parsed.success) throw ApplicationFailure.nonRetryable(`${tool.name}: malformed arguments`, TOOL_BAD_ARGS);
      const activity = Context.current();
      // A read-only tool beats while it runs, so an attempt on a hung worker is noticed at the
      // heartbeat timeout, not at its start-to-close. An effect beats itself, with its progress.
      const beat = tool.effectful ? undefined : setInterval(() => activity.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        const observation = await tool.handler(parsed.data, toolContext(tool.name, deps, activity), input);
        // A local activity's history keeps no input: its step tag and arguments ride back in the result.
        return activity.info.isLocal ? withLocalCall(observation, input) : observation;
      } finally {
        clearInterval(beat);
      }
    },
  }[tool.name]!;
}

/**
 * The activity `reconcile_<tool>`: the tool's lookup by key. `lookupFails` is the drill of a
 * system of record that refuses lookups (AGENT_REFUND_LOOKUP_FAIL), non-retryable so a drill shows
 * the ambiguous outcome at once instead of after the retry window.
 */
export function reconcileActivity<Services>(
  tool: ToolDefinition<Services>,
  services: Services,
  lookupFails = false,
): ReconcileFn | undefined {
  const reconcile = tool.reconcile?.bind(tool);
  if (!reconcile) return undefined;
  const name = `reconcile_${tool.name}`;
  return {
    [name]: async (input: ReconcileInput): Promise<ReconcileOutput> => {
      if (lookupFails)
        throw ApplicationFailure.nonRetryable(
          `${tool.name}: the system of record refused the lookup (drill: AGENT_REFUND_LOOKUP_FAIL)`,
          'RefundLookupFailed',
        );
      return reconcile(input, { services });
    },
  }[name]!;
}

/** The activity `owner_<tool>`: whom the object a call would change belongs to (the workflow's gate compares it with the principal). */
export function ownerActivity<Services>(tool: ToolDefinition<Services>, services: Services): OwnerFn | undefined {
  const owner = tool.owner?.bind(tool);
  if (!owner) return undefined;
  const name = `owner_${tool.name}`;
  return {
    [name]: async (input: { args: Record<string, unknown> }): Promise<string | null> => {
      const parsed = tool.args.safeParse(input.args);
      if (!parsed.success) throw ApplicationFailure.nonRetryable(`${tool.name}: malformed arguments`, TOOL_BAD_ARGS);
      return owner(parsed.data, { services });
    },
  }[name]!;
}

function toolContext<Services>(name: string, deps: ToolDeps<Services>, activity: Context): ToolContext<Services> {
  const execution = activity.info.workflowExecution;
  const signal = activity.cancellationSignal;
  return {
    services: deps.services,
    faults: deps.faults,
    envelope: (source, ok, data) => envelope(name, source, ok, data),
    attempt: activity.info.attempt,
    earlierHeartbeat: activity.info.heartbeatDetails,
    workflowId: execution?.workflowId ?? '',
    startHeartbeats: (details) => {
      // One at once: an attempt that crashes or stalls within the first interval still leaves its
      // details (an effect's ledger) for its retry to read.
      activity.heartbeat(details());
      const beat = setInterval(() => activity.heartbeat(details()), HEARTBEAT_EVERY_MS);
      return () => clearInterval(beat);
    },
    stall: (ms) => sleepUnlessAborted(ms, activity.cancellationSignal),
    cancellationSignal: activity.cancellationSignal,
    throwIfCancelled: () => {
      if (signal.aborted) throw signal.reason ?? new CancelledFailure('cancelled');
    },
    failForGood: (message, type) => ApplicationFailure.nonRetryable(message, type),
    failRetryable: (message, type) => ApplicationFailure.retryable(message, type),
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
