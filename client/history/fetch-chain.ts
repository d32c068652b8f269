// Reads a run's whole history from the server, including earlier runs of a continue-as-new chain,
// and decodes payloads with the client's data converter (and payload codec, if one is configured).
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { RunNotFoundError } from '../run-id';
import type { DecodePayloads, HistoryEvent } from './read-history';

/** A generous bound: a chain longer than this is a bug, not a run. */
const MAX_RUNS = 1_000;

export async function fetchRunChain(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<Array<{ runId: string; events: HistoryEvent[] }>> {
  let current: string | undefined = runId;
  if (current === undefined) {
    try {
      current = (await client.workflow.getHandle(workflowId).describe()).runId;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new RunNotFoundError(workflowId);
      throw err;
    }
  }
  const chain: Array<{ runId: string; events: HistoryEvent[] }> = [];
  while (current && chain.length < MAX_RUNS) {
    const history: { events?: HistoryEvent[] | null } = await client.workflow
      .getHandle(workflowId, current)
      .fetchHistory();
    const events: HistoryEvent[] = history.events ?? [];
    chain.unshift({ runId: current, events });
    current = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return chain;
}

export function payloadDecoder(client: Client): DecodePayloads {
  return (payloads, index = 0) => decodeFromPayloadsAtIndex(client.options.loadedDataConverter, index, payloads ?? []);
}
