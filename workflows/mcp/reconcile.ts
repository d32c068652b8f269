// The lookup by key of an MCP effect whose call was cut off or failed: the activity
// `reconcile_<server>.<tool>` asks the server that made it (`_meta.reconcile`, settle), with the
// call's own key, arguments and principal, so the server's rules for the call apply to the lookup.
// Never cancelled; a lookup that fails leaves the effect ambiguous, as for a domain tool.
import { ActivityFailure, CancellationScope, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { connectionOf } from '../../common/mcp/config';
import type { McpConfig } from '../../common/mcp/config';
import type { McpCallInput } from '../../common/mcp/discovery';
import type { Tagged } from '../../common/temporal/step-tag';
import type { EffectEntry, ReconcileOutput, ToolInput } from '../../common/types';
import { effectFromReconcile } from '../agent/effects';
import type { EffectCall } from '../agent/effects';
import type { McpToolSpec } from './tools';

type McpLookupFn = (input: Tagged<McpCallInput & Record<string, unknown>>) => Promise<ReconcileOutput>;

export async function reconcileMcpActivity(
  spec: McpToolSpec,
  config: McpConfig,
  effect: EffectCall,
  principal: ToolInput['principal'],
): Promise<EffectEntry> {
  const activities = proxyActivities<Record<string, McpLookupFn>>({
    activityId: `${effect.step}-reconcile-${effect.tool}`,
    summary: `step ${effect.step}: reconcile ${effect.tool} by key at the server`,
    startToCloseTimeout: '10 seconds',
    // As a domain's lookup: an operator waiting on a kill switch gets an answer in a minute.
    scheduleToCloseTimeout: '1 minute',
    retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds' },
  });
  const lookup = activities[`reconcile_${effect.tool}`]!;
  const found = await CancellationScope.nonCancellable(() =>
    lookup({
      server: spec.mcp.server,
      tool: spec.mcp.tool,
      connection: connectionOf(config.servers[spec.mcp.server]!),
      args: effect.args,
      idempotency_key: effect.idempotency_key,
      ...(principal !== undefined ? { principal } : {}),
      // The run the server keeps its authentication for (activities/mcp/run-proof.ts).
      run_chain: workflowInfo().firstExecutionRunId,
      timeout_seconds: 10,
      trace: { step: effect.step, role: 'reconcile' },
    }).catch((err: unknown) => ({ error: failureMessage(err) })),
  );
  return effectFromReconcile(effect, found);
}

function failureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}
