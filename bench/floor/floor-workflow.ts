// Temporal's own floor for the agent's step (bench phase `floor`): a bare workflow that runs, per
// step, the same two activities the agent's step runs (the decision, then the tool the scenario
// calls), as normal activities with the agent's own options, and nothing else: no gateway, state,
// queries, search attributes or patches. Bundled by the floor worker at its start (bench/worker.ts).
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import { decideActivityOptions } from '../../workflows/calls/decide-options';
import { toolActivityOptions } from '../../workflows/calls/tool-options';
import { ALL_TOOLS } from '../../domains/index';
import type { DecideInput, Observation, ToolInput } from '../../common/types';
import type { FloorStep } from './floor-plan';

type Activity = (input: unknown) => Promise<unknown>;

export async function floorWorkflow(steps: FloorStep[]): Promise<number> {
  const { workflowId, runId } = workflowInfo();
  const { decide } = proxyActivities<{ decide: Activity }>(decideActivityOptions(1));
  for (const [i, step] of steps.entries()) {
    // The agent's decide key names the run and the step: the scripted model answers by it.
    const input: DecideInput = { ...step.decide, idempotency_key: `${workflowId}:${runId}:decide:${i + 1}` };
    await decide(input);
    if (!step.tool) continue;
    const tools = proxyActivities<Record<string, (input: ToolInput) => Promise<Observation>>>(
      toolActivityOptions(ALL_TOOLS[step.tool.name]!),
    );
    await tools[step.tool.name]!({ ...step.tool.input, idempotency_key: `${workflowId}:${i + 1}:${step.tool.name}` });
  }
  return steps.length;
}
