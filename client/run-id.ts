// What a run id must be, the workflow type every run has, and the error for an id with no run.
// Apart from agent-client.ts so the commands that only read (list) do not load what starting a run
// needs (the workflow's input schema, the query definitions).
import { AgentError, EXIT } from './agent-error';

export const WORKFLOW_TYPE = 'reactAgent';

export class RunNotFoundError extends AgentError {
  constructor(readonly workflowId: string) {
    super(`no run with id "${workflowId}"`, EXIT.ERROR);
  }
}

/** Temporal's default limit.maxIDLength. Longer ids are refused before they reach the server. */
export const MAX_WORKFLOW_ID_CHARS = 1000;

/** A run id no server would accept: empty, too long, or with control characters. */
export class InvalidRunIdError extends AgentError {
  constructor(message: string) {
    super(message, EXIT.USAGE);
  }
}

// Checked up front: the server's error for a very long id echoes it back, and a reply of ~64 KiB
// or more never reaches the client (the call would hang until its deadline).
export function checkRunId(workflowId: string): void {
  if (workflowId.length === 0) throw new InvalidRunIdError('a run id must not be empty');
  if (workflowId.length > MAX_WORKFLOW_ID_CHARS) {
    throw new InvalidRunIdError(`a run id has at most ${MAX_WORKFLOW_ID_CHARS} characters, got ${workflowId.length}`);
  }
  if (/[\p{Cc}\p{Cs}]/u.test(workflowId))
    throw new InvalidRunIdError('a run id must not contain control characters or lone surrogates');
}
