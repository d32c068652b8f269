// The run's entry check: bad input ends the run at once, clearly and for good (the CLI checks the
// same schema first).
import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { checkRunInput } from '../../domains/index';
import type { AgentInput } from '../../common/types';
import { INVALID_INPUT } from '../../common/agent-messages';

export function checkEntry(input: AgentInput): void {
  const check = checkRunInput(input);
  const refuse = (message: string) => ApplicationFailure.create({ type: INVALID_INPUT, message, nonRetryable: true });
  if (!check.ok) throw refuse(check.error);
  // `carried` is how a run hands its state to the next one; from a client it would be forged
  // state (a billing fact, a usage, a start time) that the policy gate would trust.
  if (input.carried !== undefined && workflowInfo().continuedFromExecutionRunId === undefined) {
    throw refuse('invalid run input: carried: set only by the workflow itself when it continues as new');
  }
}
