// What `agent list` and `agent cancel --stuck` share: the filter flags, turning them into a
// visibility query, one row per run with its Agent* search attributes and effect counts, and the
// age of a run judged by the start of its continue-as-new chain (which no visibility query can
// express: StartTime is the current run's).
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { UsageError } from './cli-args';
import { AgentError } from '../client/agent-error';
import { parseDuration } from './duration';
import { FilterError, runQuery, usesAgentAttributes } from '../client/run-query';
import type { RunFilter } from '../client/run-query';
import {
  AGENT_PRINCIPAL,
  AGENT_STATUS,
  AGENT_STEP,
  AGENT_STOP_REASON,
  AGENT_TOOL_CALLS,
  AGENT_WAITING,
} from '../common/temporal/search-attributes';
import { registrationHint } from '../client/search-attribute-check';
import { EFFECTS_MEMO } from '../common/types';
import type { EffectCounts } from '../common/types';
import { effectCountsOf, formatEffectCounts } from './format-effects';
import { terminalSafe } from './terminal-text';
import { tolerantClient, undecodableReasonOf } from '../client/tolerant-client';
import { mapPool } from '../client/concurrency';
import { chainStart, describeChain } from '../client/run-chain';
import type { ChainStart, RunChain } from '../client/run-chain';
import { RunNotFoundError } from '../client/run-id';

export const FILTER_FLAGS = {
  status: { kind: 'list', value: 'S,..', help: 'only runs with this status: running, ok, stopped, cancelled' },
  'stop-reason': {
    kind: 'list',
    value: 'R,..',
    help: 'only runs that stopped for this reason (policy_denied matches every policy_denied:<rule>)',
  },
  'older-than': {
    kind: 'string',
    value: 'DURATION',
    help: 'only runs whose continue-as-new chain started longer ago than this (90s, 10m, 1h30m, 2d)',
  },
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
  /** What it waits for (AgentWaiting); null for a run without it (started before it was registered). */
  waiting: string | null;
  /** The run's effects by state (memo `agent_effects`); null for a run without that memo, or one not decodable. */
  effects: EffectCounts | null;
  /** Why its memo could not be read (encrypted under a key this process lacks); absent when it could. */
  undecodable?: string;
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
  const undecodable = Object.values(info.memo ?? {})
    .map(undecodableReasonOf)
    .find((reason) => reason !== undefined);
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
    waiting: sa.get(AGENT_WAITING) ?? null,
    effects: undecodableReasonOf(info.memo?.[EFFECTS_MEMO])
      ? null
      : (effectCountsOf(info.memo?.[EFFECTS_MEMO]) ?? null),
    ...(undecodable !== undefined ? { undecodable } : {}),
  };
}

/** The EFFECTS cell: `undecodable` when the memo could not be read. */
export function effectsCell(row: RunRow): string {
  return row.undecodable !== undefined && row.effects === null ? 'undecodable' : formatEffectCounts(row.effects);
}

/**
 * One line after a listing with rows whose memo could not be decoded: how many, and why (which key
 * id is missing); undefined when every row was read.
 */
export function undecodableNote(rows: readonly RunRow[]): string | undefined {
  const reasons = rows.map((r) => r.undecodable).filter((r): r is string => r !== undefined);
  if (reasons.length === 0) return undefined;
  const why = [...new Set(reasons)].join('; ');
  return terminalSafe(
    `${reasons.length} of ${rows.length} row(s) could not be decoded (their effects shown as undecodable; id, status, times and search attributes are read without a key): ${why}`,
  );
}

/** A row with its chain: the first run id (for cancel) and when the chain started. */
export interface ChainRow extends RunRow {
  chain: RunChain;
  chain_start: ChainStart;
}

export function rowJson(row: RunRow | ChainRow): Record<string, unknown> {
  const { start_time, close_time } = row;
  const chain =
    'chain_start' in row
      ? { chain_start_time: row.chain_start.at.toISOString(), chain_start_exact: row.chain_start.exact }
      : {};
  return {
    workflow_id: row.workflow_id,
    run_id: row.run_id,
    status: row.status,
    start_time: start_time.toISOString(),
    close_time: close_time?.toISOString() ?? null,
    agent_status: row.agent_status,
    stop_reason: row.stop_reason,
    step: row.step,
    tool_calls: row.tool_calls,
    principal: row.principal,
    effects: row.effects,
    ...(row.undecodable !== undefined ? { undecodable: row.undecodable } : {}),
    ...chain,
  };
}

/** Up to `limit` matching runs, newest first. A server without the Agent* attributes gets a clear message. */
export async function listRuns(client: Client, query: string, limit: number, namespace: string): Promise<RunRow[]> {
  const rows: RunRow[] = [];
  for await (const row of scanRuns(tolerantClient(client), query, namespace, Math.min(limit, 1000))) {
    rows.push(row);
    if (rows.length >= limit) break;
  }
  return rows;
}

/** How many runs `list --older-than` looks at, at most, to find its matches. */
export const MAX_SCAN = 10_000;
const CHUNK = 100;
const IN_FLIGHT = 8;

/**
 * Up to `limit` runs matching `query` whose chain started before `cutoff`, newest first. Each
 * candidate is described (its chain's first run, too, if it continued as new); at most MAX_SCAN
 * runs are looked at.
 */
export async function listRunsByChainAge(
  client: Client,
  query: string,
  cutoff: Date,
  limit: number,
  namespace: string,
): Promise<{ rows: ChainRow[]; scanned: number; truncated: boolean }> {
  const rows: ChainRow[] = [];
  const reader = tolerantClient(client); // describing a run decodes its memo too
  let scanned = 0;
  let chunk: RunRow[] = [];
  const judge = async () => {
    for (const row of await withChainStarts(reader, chunk, IN_FLIGHT)) {
      if (row.chain_start.at < cutoff && rows.length < limit) rows.push(row);
    }
    chunk = [];
  };
  for await (const row of scanRuns(reader, query, namespace, 1000)) {
    chunk.push(row);
    scanned++;
    if (chunk.length >= CHUNK) await judge();
    if (rows.length >= limit || scanned >= MAX_SCAN) break;
  }
  await judge();
  return { rows, scanned, truncated: scanned >= MAX_SCAN && rows.length < limit };
}

/** Each row with its chain; a run that has vanished meanwhile (past retention) is left out. */
export async function withChainStarts(client: Client, rows: readonly RunRow[], inFlight: number): Promise<ChainRow[]> {
  const now = Date.now();
  const judged = await mapPool(rows, inFlight, async (row): Promise<ChainRow | undefined> => {
    try {
      const chain = await describeChain(client, row.workflow_id, row.run_id);
      return { ...row, chain, chain_start: await chainStart(client, chain, now) };
    } catch (err) {
      if (err instanceof RunNotFoundError) return undefined;
      throw err;
    }
  });
  return judged.filter((r): r is ChainRow => r !== undefined);
}

/** `client` lists through tolerantClient: one run whose memo this process cannot decrypt must not hide the others. */
async function* scanRuns(client: Client, query: string, namespace: string, pageSize: number): AsyncGenerator<RunRow> {
  try {
    for await (const info of client.workflow.list({ query, pageSize })) yield rowOf(info);
  } catch (err) {
    const message = (err as Error).message ?? String(err);
    if (usesAgentAttributes(query) && /search attribute|invalid query|not defined|unknown/i.test(message)) {
      throw new AgentError(
        `the server rejected the filter (${message.split('\n')[0]}); are the Agent* search attributes registered? ${registrationHint(namespace)}`,
      );
    }
    throw err;
  }
}
