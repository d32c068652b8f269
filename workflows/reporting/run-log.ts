// One line in the worker's event log when a run starts and one when it ends, for an operator's log
// shipper: the run's id (the SDK adds workflowId and runId), its domain, whom it acts for as a hash
// (16 hex digits of sha256: the log never carries the principal itself), and at the end the stop
// reason, steps, tool calls and cost. The SDK's workflow logger writes nothing while it replays, so a
// replayed history or a query on an ended run adds no line.
import { log } from '@temporalio/workflow';
import { sha256Hex } from '../../common/tools/hash';
import type { Usage } from '../../common/cost/budget';

/** 16 hex digits of sha256 of the principal; null before a run knows whom it acts for. */
export function principalHash(principal: string | undefined): string | null {
  return principal === undefined ? null : sha256Hex(principal).slice(0, 16);
}

/** The first run of a chain started (a continued run is the same run for the operator). */
export function logRunStarted(domain: string, principal: string | undefined): void {
  log.info('run started', { domain, principal_hash: principalHash(principal) });
}

export interface RunEnd {
  domain: string;
  principal: string | undefined;
  status: string;
  stopReason: string;
  usage: Usage;
}

export function logRunEnded(end: RunEnd): void {
  log.info('run ended', {
    domain: end.domain,
    principal_hash: principalHash(end.principal),
    status: end.status,
    stop_reason: end.stopReason,
    steps: end.usage.steps,
    tool_calls: end.usage.tool_calls,
    cost_usd: end.usage.cost_usd ?? null,
  });
}
