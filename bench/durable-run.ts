// One durable run through the shipped client: started, awaited, timed.
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { runResult, startRun } from '../client/agent-client';
import { mapPool } from '../client/concurrency';
import type { TemporalEnv } from '../runtime/temporal-env';
import type { AgentInput, AgentResult } from '../common/types';
import type { Ctx } from './context';

export interface DurableRun {
  id: string;
  runId: string;
  ms: number;
  result?: AgentResult;
  error?: string;
}

/**
 * Starts a run per id, at most 50 starts in flight (a client would not open 500 RPCs at once
 * either), and awaits every result; each run's clock starts at its own start call.
 */
export async function startAll(
  ctx: Ctx,
  env: TemporalEnv,
  ids: readonly string[],
  input: AgentInput,
  onDone: () => void,
): Promise<DurableRun[]> {
  const results: Array<Promise<DurableRun>> = [];
  await mapPool(ids, 50, async (id) => {
    const t = performance.now();
    const ended = (fields: Omit<DurableRun, 'id' | 'ms'>): DurableRun => ({ id, ms: performance.now() - t, ...fields });
    try {
      const handle = await startRun(ctx.client, env, input, id);
      const runId = firstRunId(handle);
      results.push(
        runResult(handle)
          .then(
            (result) => ended({ runId, result }),
            (err: unknown) => ended({ runId, error: String(err) }),
          )
          .finally(onDone),
      );
    } catch (err) {
      results.push(Promise.resolve(ended({ runId: '', error: String(err) })));
    }
  });
  return Promise.all(results);
}

export async function runDurable(ctx: Ctx, env: TemporalEnv, id: string, input: AgentInput): Promise<DurableRun> {
  const start = performance.now();
  let runId = '';
  try {
    const handle = await startRun(ctx.client, env, input, id);
    runId = firstRunId(handle);
    const result = await runResult(handle);
    return { id, runId, ms: performance.now() - start, result };
  } catch (err) {
    return { id, runId, ms: performance.now() - start, error: err instanceof Error ? err.message : String(err) };
  }
}

/** startRun returns what client.workflow.start returns; its declared type just does not say so. */
export function firstRunId(handle: WorkflowHandle): string {
  return (handle as WorkflowHandleWithFirstExecutionRunId).firstExecutionRunId;
}

export function ok(run: DurableRun, steps: number): boolean {
  return run.result?.stop_reason === 'success' && run.result.usage.steps === steps;
}
