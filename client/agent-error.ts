// The one error type an operator is shown: a message meant for one line on stderr, and the exit
// code the CLI ends with (docs/cli.md lists them). The run API's errors (no such run, a bad run id
// or input, a refused answer or top-up, a bad filter) extend it, so the CLI reports any of them by
// its code, without knowing its class.

export const EXIT = {
  /** The command did what was asked; for a run: it ended with a final answer (stop reason success). */
  OK: 0,
  /** A runtime error: no such run, no server, a refused answer, ... */
  ERROR: 1,
  /** Bad usage or input: an unknown flag, a bad value. */
  USAGE: 2,
  /** `cancel`: the cancel is recorded but the run was still running when --wait was over. */
  STILL_RUNNING: 3,
  /** The run ended stopped by a guard: a budget, a denial, a loop, invalid model output, no approval in time. */
  RUN_STOPPED: 4,
  /** The run was cancelled (the kill switch). */
  RUN_CANCELLED: 5,
  /** The run failed: the LLM or a tool failed on every attempt, or Temporal terminated, timed out or failed it. */
  RUN_FAILED: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class AgentError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.ERROR,
    /** What to read next (`see agent help run`), printed after the message. */
    readonly hint?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
