// The runs of one workflow id form chains: continue-as-new (and reset, retries) link runs that
// share a first run id. An operator thinks in chains: a run "started" when its chain started (a
// chain that continued as new a minute ago may have been stuck for hours), and a cancel or
// terminate aimed at a chain hits whatever run is current in it, never a newer chain that reuses
// the workflow id.
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { checkRunId, RunNotFoundError } from './run-id';

export interface RunChain {
  workflowId: string;
  /** The run that was current (or was named) when it was described. */
  runId: string;
  /** The chain's first run: `firstExecutionRunId` for cancel and terminate. */
  firstRunId: string;
  description: WorkflowExecutionDescription;
}

export interface ChainStart {
  at: Date;
  /**
   * False when the first run is past the namespace's retention: the chain started no later than
   * `at` (the earlier of this run's start and now minus the retention), maybe earlier.
   */
  exact: boolean;
}

/** Describes a run (default: the workflow id's current run) and finds its chain's first run id. */
export async function describeChain(client: Client, workflowId: string, runId?: string): Promise<RunChain> {
  checkRunId(workflowId); // before any call: the server's echo of a huge id never arrives
  let description: WorkflowExecutionDescription;
  try {
    description = await client.workflow.getHandle(workflowId, runId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new RunNotFoundError(workflowId);
    throw err;
  }
  const firstRunId =
    description.raw.workflowExecutionInfo?.firstRunId ||
    (await firstRunIdFromHistory(client, workflowId, description.runId));
  return { workflowId, runId: description.runId, firstRunId, description };
}

/** Servers before WorkflowExecutionInfo.first_run_id: the run's started event names it. */
async function firstRunIdFromHistory(client: Client, workflowId: string, runId: string): Promise<string> {
  const response = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    maximumPageSize: 1,
  });
  return response.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.firstExecutionRunId || runId;
}

/** When the chain's first run started. */
export async function chainStart(client: Client, chain: RunChain, now = Date.now()): Promise<ChainStart> {
  const runStart = chain.description.startTime;
  if (chain.firstRunId === chain.runId) return { at: runStart, exact: true };
  try {
    const first = await client.workflowService.describeWorkflowExecution({
      namespace: client.options.namespace,
      execution: { workflowId: chain.workflowId, runId: chain.firstRunId },
    });
    const startMs = optionalTsToMs(first.workflowExecutionInfo?.startTime);
    if (startMs !== undefined) return { at: new Date(startMs), exact: true };
  } catch (err) {
    if ((err as { code?: number }).code !== 5) throw err; // NOT_FOUND: deleted after its retention
  }
  // A closed run is deleted `retention` after it closed, and the chain started before that.
  const retentionMs = await namespaceRetentionMs(client);
  const bound = retentionMs === undefined ? runStart.getTime() : Math.min(runStart.getTime(), now - retentionMs);
  return { at: new Date(bound), exact: false };
}

const retentions = new WeakMap<Client, Promise<number | undefined>>();

function namespaceRetentionMs(client: Client): Promise<number | undefined> {
  let retention = retentions.get(client);
  if (!retention) {
    retention = client.workflowService
      .describeNamespace({ namespace: client.options.namespace })
      .then((ns) => optionalTsToMs(ns.config?.workflowExecutionRetentionTtl));
    retentions.set(client, retention);
  }
  return retention;
}
