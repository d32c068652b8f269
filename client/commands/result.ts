// `agent result ID`: wait until a run has ended and print its result (a cancelled run's partial
// result comes from the memo the workflow left).
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { reactAgent } from '../../workflows/agent';
import type { AgentResult } from '../../common/types';
import { existingRun } from '../agent-client';
import { parseArgs, usageText } from '../cli-args';
import type { Command, CommandContext, Writable } from '../cli-context';
import { line } from '../cli-context';
import { followRun } from '../follow-run';
import { formatResult } from '../format';
import { terminalSafeJson } from '../terminal-text';

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: {
    json: { kind: 'boolean', help: 'print the result (AgentResult) as one JSON document on stdout' },
  },
} as const;

/** Follows the run, writing step lines to `progress`, and returns its result. */
export async function waitAndShow(
  client: Client,
  handle: WorkflowHandle<typeof reactAgent>,
  progress: Writable,
  ctx: CommandContext,
  taskQueue = ctx.env.taskQueue,
): Promise<AgentResult> {
  return followRun(client, handle, {
    onLine: (text) => line(progress, text),
    onNoState: (message) =>
      line(ctx.io.stderr, `agent: ${message}; is a worker polling task queue "${taskQueue}"? (npm run worker)`),
  });
}

/** The end of `run --wait` and all of `result`: the result block, or the result as JSON. */
export function printResult(result: AgentResult, json: boolean, ctx: CommandContext): void {
  if (json) {
    line(ctx.io.stdout, terminalSafeJson(result, 2));
    return;
  }
  for (const text of formatResult(result)) line(ctx.io.stdout, text);
}

export const result: Command = {
  name: 'result',
  summary: 'wait for a run to end and print its result',
  usage: usageText('agent result ID [--json]', spec),
  async run(argv, ctx) {
    const args = parseArgs(argv, spec, 'see `agent help result`');
    if (args.help) {
      line(ctx.io.stdout, result.usage);
      return 0;
    }
    const json = args.flags.json === true;
    const client = await ctx.client();
    const handle = await existingRun(client, args.positionals[0]!);
    const { taskQueue } = await handle.describe();
    const outcome = await waitAndShow(client, handle, json ? ctx.io.stderr : ctx.io.stdout, ctx, taskQueue);
    printResult(outcome, json, ctx);
    return 0;
  },
};
