// A tool call as an activity, and the lookup by idempotency key that settles an effect whose call
// was cut off or failed.
import {
  ActivityFailure,
  CancellationScope,
  patched,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { Remaining } from '../../common/cost/budget';
import type { Tagged } from '../../common/temporal/step-tag';
import { ALL_TOOLS } from '../../domains/index';
import type { EffectEntry, Observation, ReconcileInput, ReconcileOutput, ToolInput } from '../../common/types';
import { toolCallSummary } from '../reporting/activity-summary';
import { effectFromReconcile } from '../agent/effects';
import type { EffectCall } from '../agent/effects';
import type { AdmittedCall } from '../agent/step';
import { withoutLocalCall } from '../../common/temporal/local-call';
import { LOCAL_TOOLS_PATCH } from '../agent/patches';
import { localToolActivityOptions, runsAsLocalActivity, toolActivityOptions } from './tool-options';

type ToolFn = (input: Tagged<ToolInput>) => Promise<Observation>;
type ReconcileFn = (input: Tagged<ReconcileInput>) => Promise<ReconcileOutput>;
type OwnerFn = (input: Tagged<{ args: Record<string, unknown> }>) => Promise<string | null>;

/** Calls the tool for `principal`, under the key that makes a retry of an effect harmless. */
export function callToolActivity(
  call: AdmittedCall,
  idempotencyKey: string,
  principal: ToolInput['principal'],
  left: Remaining,
  stateKey?: string,
  store?: string,
): Promise<Observation> {
  const spec = ALL_TOOLS[call.name]!;
  const input: Tagged<ToolInput> = {
    args: call.args,
    idempotency_key: idempotencyKey,
    principal,
    ...(stateKey !== undefined ? { state_key: stateKey } : {}),
    ...(store !== undefined ? { store } : {}),
    trace: { step: call.step, role: 'tool' },
  };
  const summary = toolCallSummary(call, left);
  // A read-only tool runs in the workflow's own task: the same input, key, gateway before it and
  // the same retries, one server round trip less (workflows/agent/patches.ts LOCAL_TOOLS_PATCH).
  // Not once the run is pinned to a kind of store: only a worker on that store may answer, and a
  // local activity cannot move to another worker (a normal one's refused attempt is retried elsewhere).
  if (store === undefined && runsAsLocalActivity(spec) && patched(LOCAL_TOOLS_PATCH)) {
    const local = proxyLocalActivities<Record<string, ToolFn>>({ summary, ...localToolActivityOptions(spec) });
    return local[call.name]!(input).then(withoutLocalCall);
  }
  const tools = proxyActivities<Record<string, ToolFn>>({
    activityId: `${call.step}-${call.name}`,
    summary,
    ...toolActivityOptions(spec),
  });
  return tools[call.name]!(input);
}

/** Whom the object the call would change belongs to (the tool's `owner_<tool>` activity), or null: no such object. */
export function ownerActivity(call: AdmittedCall): Promise<string | null> {
  const activities = proxyActivities<Record<string, OwnerFn>>({
    activityId: `${call.step}-owner-${call.name}`,
    summary: `step ${call.step}: whose is the object ${call.name} would change`,
    startToCloseTimeout: '10 seconds',
    retry: { maximumAttempts: 3 },
  });
  return activities[`owner_${call.name}`]!({ args: call.args, trace: { step: call.step, role: 'owner' } });
}

/**
 * The lookup by key, never cancelled: a cut-off effect ends up confirmed, rejected, not made, or
 * (lookup failed) ambiguous; `store` as for the call (a worker on another kind of store refuses).
 */
export async function reconcileActivity(call: EffectCall, store?: string): Promise<EffectEntry> {
  const activities = proxyActivities<Record<string, ReconcileFn>>({
    activityId: `${call.step}-reconcile-${call.tool}`,
    summary: `step ${call.step}: reconcile ${call.tool} by key`,
    startToCloseTimeout: '10 seconds',
    // Short: an operator waiting on a kill switch gets an answer (ambiguous at worst) in a minute.
    scheduleToCloseTimeout: '1 minute',
    retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds' },
  });
  const lookup = activities[`reconcile_${call.tool}`]!;
  const found = await CancellationScope.nonCancellable(() =>
    lookup({
      idempotency_key: call.idempotency_key,
      settle: true,
      ...(store !== undefined ? { store } : {}),
      trace: { step: call.step, role: 'reconcile' },
    }).catch((err: unknown) => ({
      error: failureMessage(err),
    })),
  );
  return effectFromReconcile(call, found);
}

function failureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}
