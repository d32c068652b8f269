// The CLI's exit codes (the table is client/agent-error.ts's EXIT, which errors carry): `agent help`
// and docs/cli.md print them, and `run --wait`,
// `result` and `watch` end with the code of how the run ended, so a script can tell a final
// answer from a run that stopped, was cancelled or failed without parsing the output.
import { EXIT } from '../client/agent-error';
import type { AgentResult } from '../common/types';
import { stopReasonFamily } from '../common/stop-reasons';
import type { StopReasonFamily } from '../common/stop-reasons';

export const EXIT_CODE_LINES: readonly string[] = [
  `${EXIT.OK} success (for a run: a final answer, or its customer ended the conversation)`,
  `${EXIT.ERROR} runtime error (no such run, no server, ...)`,
  `${EXIT.USAGE} bad usage or input`,
  `${EXIT.STILL_RUNNING} cancel: still running after --wait`,
  `${EXIT.RUN_STOPPED} the run stopped (a budget, a denial, a loop, invalid output, approval or idle timeout)`,
  `${EXIT.RUN_CANCELLED} the run was cancelled`,
  `${EXIT.RUN_FAILED} the run failed (LLM or tool failed for good; terminated, timed out)`,
];

export type RunFamily = StopReasonFamily;

/**
 * The family of a stop reason. Decided from the reason's name here, the same split as the stop
 * reason table that is to carry a family per reason (common/stop-reasons.ts): use its family once
 * it has one.
 */
export function runFamily(stopReason: string): RunFamily {
  // An unknown reason (a newer worker's) is not success: report it as stopped.
  return stopReasonFamily(stopReason) ?? 'stopped';
}

const EXIT_OF_FAMILY: Record<RunFamily, number> = {
  success: EXIT.OK,
  stopped: EXIT.RUN_STOPPED,
  cancelled: EXIT.RUN_CANCELLED,
  failed: EXIT.RUN_FAILED,
};

/** The exit code of a command that waited for a run: how the run ended. */
export function exitCodeOf(result: Pick<AgentResult, 'stop_reason'>): number {
  return EXIT_OF_FAMILY[runFamily(result.stop_reason)];
}
