// What `agent list` and `agent cancel --stuck` share: the filter flags, turning them into a
// visibility query, and one row per run with its Agent* search attributes.
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { UsageError } from './cli-args';
import { CliError } from './cli-context';
import { parseDuration } from './duration';
import { FilterError, runQuery, usesAgentAttributes } from './run-query';
import type { RunFilter } from './run-query';
import { AGENT_PRINCIPAL, AGENT_STATUS, AGENT_STEP, AGENT_STOP_REASON, AGENT_TOOL_CALLS } from '../workflows/search-attributes';
import { registrationHint } from './search-attribute-check';
import { EFFECTS_MEMO } from '../workflows/types';
import type { EffectCounts } from '../workflows/types';
import { effectCountsOf } from './format-effects';

export const FILTER_FLAGS = {
  status: { kind: 'list', value: 'S,..', help: 'only runs with this status: running, ok, stopped, cancelled' },
  'stop-reason': { kind: 'list', value: 'R,..', help: 'only runs that stopped for this reason (tool_denied matches every tool_denied:<tool>)' },
  'older-than': { kind: 'string', value: 'DURATION', help: 'only runs started longer ago than this (90s, 10m, 1h30m, 2d)' },
} as const;

export interface FilterFlags {
  status?: string[];
  'stop-reason'?: string[];
  'older-than'?: string;
}

export interface RunRow {
  workflow_id: string;
  run_id: string;
  /** Temporal's status: RUNNING, COMPLETED, CANCELED, ... */
  status: string;
  start_time: Date;
  close_time?: Date;
  /** The Agent* search attributes (null when the run has none, e.g. no attributes registered). */
  agent_status: string | null;
  stop_reason: string | null;
  step: number | null;
  tool_calls: number | null;
  principal: string | null;
  /** The run's effects by state (memo `agent_effects`); null for a run without that memo. */
  effects: EffectCounts | null;
}

/** Flags to a filter; `now` is read once, so "older than" is a fixed instant. */
export function filterFromFlags(flags: FilterFlags, hint: string, now = Date.now()): RunFilter {
  let startedBefore: Date | undefined;
  if (flags['older-than'] !== undefined) {
    try {
      startedBefore = new Date(now - parseDuration(flags['older-than']));
    } catch (err) {
      throw new UsageError(`--older-than: ${(err as Error).message}`, hint);
    }
  }
  return { statuses: flags.status, stopReasons: flags['stop-reason'], startedBefore };
}

export function queryFor(filter: RunFilter, hint: string): string {
  try {
    return runQuery(filter);
  } catch (err) {
    if (err instanceof FilterError) throw new UsageError(err.message, hint);
    throw err;
  }
}

export function rowOf(info: WorkflowExecutionInfo): RunRow {
  const sa = info.typedSearchAttributes;
  return {
    workflow_id: info.workflowId,
    run_id: info.runId,
    status: info.status.name,
    start_time: info.startTime,
    close_time: info.closeTime,
    agent_status: sa.get(AGENT_STATUS) ?? null,
    stop_reason: sa.get(AGENT_STOP_REASON) ?? null,
    step: sa.get(AGENT_STEP) ?? null,
    tool_calls: sa.get(AGENT_TOOL_CALLS) ?? null,
    principal: sa.get(AGENT_PRINCIPAL) ?? null,
    effects: effectCountsOf(info.memo?.[EFFECTS_MEMO]) ?? null,
  };
}

export function rowJson(row: RunRow): Record<string, unknown> {
  return { ...row, start_time: row.start_time.toISOString(), close_time: row.close_time?.toISOString() ?? null };
}

/** Up to `limit` matching runs, newest first. A server without the Agent* attributes gets a clear message. */
export async function listRuns(client: Client, query: string, limit: number, namespace: string): Promise<RunRow[]> {
  const rows: RunRow[] = [];
  try {
    for await (const info of client.workflow.list({ query, pageSize: Math.min(limit, 1000) })) {
      rows.push(rowOf(info));
      if (rows.length >= limit) break;
    }
  } catch (err) {
    const message = (err as Error).message ?? String(err);
    if (usesAgentAttributes(query) && /search attribute|invalid query|not defined|unknown/i.test(message)) {
      throw new CliError(`the server rejected the filter (${message.split('\n')[0]}); are the Agent* search attributes registered? ${registrationHint(namespace)}`);
    }
    throw err;
  }
  return rows;
}
