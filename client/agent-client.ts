// What the CLI, the demo and the tests do with runs: start, read state, wait for the result,
// cancel, list. One place, so every caller gets the same semantics (a cancelled run's result is
// rebuilt from the memo the workflow left).
import { WorkflowNotFoundError, WithStartWorkflowOperation } from '@temporalio/client';
import type {
  WorkflowHandle,
  WorkflowHandleWithFirstExecutionRunId,
  WorkflowStartOptions,
  WorkflowExecutionDescription,
  Client,
} from '@temporalio/client';
import { AgentError, EXIT } from './agent-error';
import type { reactAgent } from '../workflows/agent/agent';
import { checkFirstMessage, firstMessageUpdateId } from '../common/conversation/conversation';
import type { SayRequest } from '../common/conversation/conversation';
import type { AgentInput, AgentState } from '../common/types';
import type { TemporalEnv } from '../runtime/temporal-env';
import { AGENT_GOAL, AGENT_WAITING, attributePairs, goalAttribute } from '../common/temporal/search-attributes';
import { checkSearchAttributes } from './search-attribute-check';
import { EncryptionCodec } from '../runtime/codec/encryption-codec';
import { ALL_TOOLS, checkRunInput as checkDomainInput } from '../domains/index';
import { runSummary } from './run-summary';
import { checkRunId, RunNotFoundError, WORKFLOW_TYPE } from './run-id';
import { sayUpdate, stateQuery } from '../common/agent-messages';

// Waiting for a result and cancelling live in run-control.ts (light to load, for `cancel`); here for every caller.
export { cancelRun, runResult } from './run-control';
// The run id's rules and errors live in run-id.ts (light to load, for `list`); here for every caller.
export { checkRunId, InvalidRunIdError, MAX_WORKFLOW_ID_CHARS, RunNotFoundError, WORKFLOW_TYPE } from './run-id';

/** Input no run may start with: out of bounds, an unknown tool, fields only the workflow sets. */
export class InvalidRunInputError extends AgentError {
  constructor(message: string) {
    super(message, EXIT.USAGE);
  }
}

/**
 * Throws InvalidRunInputError unless the workflow would accept `input` (common/input.ts), so a
 * bad value is refused here, before anything starts, rather than by the run itself.
 */
export function checkRunInput(input: AgentInput): void {
  const check = checkDomainInput(input);
  if (!check.ok) throw new InvalidRunInputError(check.error);
  // The workflow writes `carried` when it continues as new; from a client it would seed fake state.
  if (input.carried !== undefined)
    throw new InvalidRunInputError('invalid run input: carried: set only by the workflow when it continues as new');
}

export async function startRun(
  client: Client,
  env: TemporalEnv,
  input: AgentInput,
  workflowId: string,
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof reactAgent>> {
  return client.workflow.start<typeof reactAgent>(WORKFLOW_TYPE, await runStartOptions(client, env, input, workflowId));
}

/**
 * Starts a conversation with the customer's first message in one request (Temporal's
 * update-with-start): the message is in the transcript before the model's first decision, as when a
 * customer writes in first, however slow the sender is. Repeated (its answer lost), it reaches the
 * same run and the same message (by its update id, remembered across continue-as-new), not a
 * second one. A first message the run would refuse is refused here, before anything starts.
 */
export async function startConversation(
  client: Client,
  env: TemporalEnv,
  input: AgentInput,
  workflowId: string,
  first: SayRequest,
): Promise<WorkflowHandle<typeof reactAgent>> {
  // The say validator's own rule: a run it would refuse the message to must not start without it.
  const check = checkFirstMessage(first, input.conversation !== undefined);
  if (!check.ok) throw new InvalidRunInputError(`the first message is refused: ${check.error}`);
  const start = new WithStartWorkflowOperation<typeof reactAgent>(WORKFLOW_TYPE, {
    ...(await runStartOptions(client, env, input, workflowId)),
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  await client.workflow.executeUpdateWithStart(sayUpdate, {
    args: [first],
    updateId: firstMessageUpdateId(workflowId),
    startWorkflowOperation: start,
  });
  return start.workflowHandle();
}

/** How a run starts: its input checked, its workflow task timeout, summary and first search attributes. */
async function runStartOptions(
  client: Client,
  env: TemporalEnv,
  input: AgentInput,
  workflowId: string,
): Promise<WorkflowStartOptions<typeof reactAgent>> {
  checkRunId(workflowId);
  checkRunInput(input);
  // With the Agent* search attributes registered, a run is findable (status running, principal)
  // from the moment it starts, even before a worker picks it up; the workflow keeps them current.
  const check = await checkSearchAttributes(client);
  const searchAttributes = check.available;
  return {
    taskQueue: env.taskQueue,
    workflowId,
    args: [{ ...input, search_attributes: searchAttributes && input.search_attributes !== false }],
    workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
    // The Web UI's run list and run page: who the run acts for and what it was asked.
    ...runSummary(input),
    typedSearchAttributes: searchAttributes
      ? [
          ...attributePairs({ status: 'running', step: 0, toolCalls: 0, principal: input.principal }, ALL_TOOLS),
          ...(check.goal && !encryptsPayloads(client) ? [{ key: AGENT_GOAL, value: goalAttribute(input.goal) }] : []),
          // Present from the start (it waits for nobody yet): the workflow keeps it current only then.
          ...(check.waiting ? [{ key: AGENT_WAITING, value: 'none' }] : []),
        ]
      : undefined,
  };
}

/**
 * Search attributes are never encrypted: with a payload codec the goal stays in the encrypted
 * input and static summary only, and the run list's goal column stays empty.
 */
function encryptsPayloads(client: Client): boolean {
  return client.options.loadedDataConverter.payloadCodecs.some((codec) => codec instanceof EncryptionCodec);
}

/**
 * Temporal's default is 10 s. A hung (not dead) worker keeps its polls open and is handed the run's
 * next workflow tasks (its sticky poll, then one of its normal ones), each lost only when this timeout
 * passes: with 10 s a cancel reached the workflow 20-33 s late, with 4 s a hung worker still cost a
 * run 8 s. The agent's workflow tasks take milliseconds; a slow one is retried, not lost.
 */
export const WORKFLOW_TASK_TIMEOUT = '2 seconds';

export async function existingRun(client: Client, workflowId: string): Promise<WorkflowHandle<typeof reactAgent>> {
  checkRunId(workflowId);
  const handle = client.workflow.getHandle<typeof reactAgent>(workflowId);
  try {
    await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new RunNotFoundError(workflowId);
    throw err;
  }
  return handle;
}

/** The run now going on under `workflowId`, described: one round trip; RunNotFoundError when there is none. */
export async function describeExistingRun(client: Client, workflowId: string): Promise<WorkflowExecutionDescription> {
  checkRunId(workflowId);
  try {
    return await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new RunNotFoundError(workflowId);
    throw err;
  }
}

/**
 * A handle on the chain `described` belongs to (its first run's id), not on one run: a request
 * reaches the chain's current run, the next one when this one continues as new meanwhile, and never
 * a later chain started under the same workflow id. Pinned to the run on a server without chain ids.
 */
export function chainHandle(
  client: Client,
  described: WorkflowExecutionDescription,
): WorkflowHandle<typeof reactAgent> {
  const firstExecutionRunId = described.raw.workflowExecutionInfo?.firstRunId || undefined;
  return firstExecutionRunId
    ? client.workflow.getHandle<typeof reactAgent>(described.workflowId, undefined, { firstExecutionRunId })
    : client.workflow.getHandle<typeof reactAgent>(described.workflowId, described.runId);
}

/** The chain's id (its first run's id), or undefined from a server that does not say it. */
export function chainOf(described: WorkflowExecutionDescription): string | undefined {
  return described.raw.workflowExecutionInfo?.firstRunId || undefined;
}

export async function runState(handle: WorkflowHandle): Promise<AgentState> {
  return handle.query(stateQuery);
}
