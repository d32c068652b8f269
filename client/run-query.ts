// Visibility queries over reactAgent runs, built from operator filters. Used by `agent list` and
// `agent cancel --stuck`; the same strings work in the Web UI's search box.
//  - status `running` is Temporal's own ExecutionStatus (true even for a run no worker has
//    picked up, or one that was terminated before it could update its attributes); ok, stopped
//    and cancelled are the AgentStatus search attribute the workflow sets when it ends.
//  - a stop reason named without what follows its colon (tool_denied, policy_denied,
//    invalid_action…) matches every reason of that name (`AgentStopReason STARTS_WITH
//    'tool_denied:'`); which names those are comes from the stop-reason table.
//  - waiting kinds are the AgentWaiting search attribute (common/temporal/waiting.ts); without
//    `none` among them only open runs match: a terminated run keeps the value it had.
//  - older-than compares StartTime with a fixed instant, computed once: a query run twice selects
//    the same runs, minus those that ended in between.
import { AgentError, EXIT } from './agent-error';
import { WORKFLOW_TYPE } from './run-id';
import { RUN_STATUSES } from '../common/temporal/search-attributes';
import type { RunStatus } from '../common/temporal/search-attributes';
import { STOP_REASON_TABLE } from '../common/stop-reasons';
import { waitingQuery } from '../common/temporal/waiting';
import type { WaitKind } from '../common/temporal/waiting';

/**
 * The names of the stop reasons a run records with a suffix after a colon: the table's
 * parametrised ones (tool_denied:<tool>, policy_denied:<rule>) and the prefixes of its
 * colon-spelled keys (invalid_action:bad_json, budget_exhausted:usd).
 */
export const STOP_REASON_PREFIXES: ReadonlySet<string> = stopReasonPrefixes();

function stopReasonPrefixes(): Set<string> {
  const prefixes = new Set<string>();
  for (const [key, info] of Object.entries(STOP_REASON_TABLE)) {
    if ('takes' in info) prefixes.add(key);
    else if (key.includes(':')) prefixes.add(key.slice(0, key.indexOf(':')));
  }
  return prefixes;
}

export interface RunFilter {
  statuses?: readonly string[];
  stopReasons?: readonly string[];
  /** Started before this instant. */
  startedBefore?: Date;
  /** Temporal says the run is still open (ExecutionStatus = 'Running'). */
  openOnly?: boolean;
  /** What the run waits for (AgentWaiting), already checked (parseWaitingKinds). */
  waiting?: readonly WaitKind[];
}

/** A filter no visibility query can express: an unknown status, characters a query cannot quote. */
export class FilterError extends AgentError {
  constructor(message: string) {
    super(message, EXIT.USAGE);
  }
}

const SAFE_VALUE = /^[A-Za-z0-9_:.\-()]+$/;

function literal(value: string, what: string): string {
  if (!SAFE_VALUE.test(value))
    throw new FilterError(`${what} ${JSON.stringify(value)} has characters a filter cannot use`);
  return `'${value}'`;
}

export function isRunStatus(value: string): value is RunStatus {
  return (RUN_STATUSES as readonly string[]).includes(value);
}

export function runQuery(filter: RunFilter): string {
  const clauses = [`WorkflowType = '${WORKFLOW_TYPE}'`];
  const waiting = filter.waiting && filter.waiting.length > 0 ? filter.waiting : undefined;
  // A run that ended waits for nobody; one terminated mid-wait still says what it waited for.
  if (filter.openOnly || (waiting && !waiting.includes('none'))) clauses.push(`ExecutionStatus = 'Running'`);
  if (waiting) clauses.push(waitingQuery(waiting));

  if (filter.statuses && filter.statuses.length > 0) {
    const parts: string[] = [];
    const agent: string[] = [];
    for (const status of filter.statuses) {
      if (!isRunStatus(status))
        throw new FilterError(`unknown status ${JSON.stringify(status)} (one of ${RUN_STATUSES.join(', ')})`);
      if (status === 'running') parts.push(`ExecutionStatus = 'Running'`);
      else agent.push(literal(status, 'status'));
    }
    if (agent.length === 1) parts.push(`AgentStatus = ${agent[0]}`);
    if (agent.length > 1) parts.push(`AgentStatus IN (${agent.join(', ')})`);
    clauses.push(parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`);
  }

  if (filter.stopReasons && filter.stopReasons.length > 0) {
    const parts = filter.stopReasons.map((reason) =>
      STOP_REASON_PREFIXES.has(reason)
        ? `AgentStopReason STARTS_WITH ${literal(`${reason}:`, 'stop reason')}`
        : `AgentStopReason = ${literal(reason, 'stop reason')}`,
    );
    clauses.push(parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`);
  }

  if (filter.startedBefore) clauses.push(`StartTime < '${filter.startedBefore.toISOString()}'`);
  return clauses.join(' AND ');
}

/** Whether a query uses the Agent* attributes (a server without them rejects it). */
export function usesAgentAttributes(query: string): boolean {
  return /\bAgent[A-Z]\w*/.test(query);
}
