// The inbox as a metric: agent_runs_waiting{kind}, the open agent runs by what they wait for (the
// AgentWaiting search attribute), counted in Temporal's visibility store when scraped, at most once
// per WAITING_CACHE_MS whatever the scrape rate. Every worker reports the namespace's whole count:
// aggregate with max (or pick one worker), never sum.
import { PERSON_WAIT_KINDS, waitingQuery } from '../common/temporal/waiting';
import type { WaitKind } from '../common/temporal/waiting';

/** How long one round of counts serves scrapes. */
export const WAITING_CACHE_MS = 15_000;

/** The agent's workflow type, as the worker registers it (workflows/agent/agent.ts: reactAgent). */
const AGENT_WORKFLOW_TYPE = 'reactAgent';

/** Counts the runs a visibility query matches (CountWorkflowExecutions). */
export type CountRuns = (query: string) => Promise<number>;

/** The query counted for `kind`: open runs only (a terminated run keeps the value it had). */
export function waitingCountQuery(kind: WaitKind): string {
  return `WorkflowType = '${AGENT_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND ${waitingQuery([kind])}`;
}

/**
 * The counts by kind, from a cache of WAITING_CACHE_MS; undefined when the server cannot count
 * them (unreachable, or AgentWaiting not registered): the gauge then has no samples, not zeros.
 */
export function waitingCounts(
  count: CountRuns,
  ttlMs = WAITING_CACHE_MS,
  now: () => number = Date.now,
): () => Promise<Map<WaitKind, number> | undefined> {
  let cached: { atMs: number; counts: Promise<Map<WaitKind, number> | undefined> } | undefined;
  return () => {
    if (!cached || now() - cached.atMs >= ttlMs) cached = { atMs: now(), counts: countAll(count) };
    return cached.counts;
  };
}

async function countAll(count: CountRuns): Promise<Map<WaitKind, number> | undefined> {
  try {
    const counts = await Promise.all(PERSON_WAIT_KINDS.map((kind) => count(waitingCountQuery(kind))));
    return new Map(PERSON_WAIT_KINDS.map((kind, i) => [kind, counts[i]!]));
  } catch {
    return undefined;
  }
}
