// `agent result ID`: wait until a run has ended and print its result (a cancelled run's partial
// result comes from the memo the workflow left). Exits with the code of how the run ended.
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { reactAgent } from '../../workflows/agent/agent';
import { existingRun } from '../../client/agent-client';
import { usageText } from '../cli-args';
import type { CommandContext } from '../cli-context';
import { defineCommand, line, printJson, progressOut } from '../cli-context';
import { exitCodeOf } from '../exit-codes';
import { followRun } from '../follow-run';
import { formatResult } from '../format';

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: {},
} as const;

export interface FollowPrinting {
  taskQueue: string;
  /** Prefix of each text line (watch: the time). */
  prefix?: () => string;
  /** The first line of -o jsonl (what is being followed). */
  header?: Record<string, unknown>;
}

/**
 * Follows the run to its end and prints it: text, progress lines then the result block;
 * -o json, progress on stderr and the result (AgentResult) as one document on stdout;
 * -o jsonl, one line per event ({type: step | phase | effect, time, ...}) then {type: "result", result}.
 * Returns the exit code of how the run ended (cli/exit-codes.ts).
 */
export async function followAndPrint(
  client: Client,
  handle: WorkflowHandle<typeof reactAgent>,
  ctx: CommandContext,
  how: FollowPrinting,
): Promise<number> {
  const jsonl = ctx.output === 'jsonl';
  const progress = progressOut(ctx);
  const prefix = how.prefix ?? (() => '');
  if (jsonl && how.header) printJson(ctx, how.header);
  const result = await followRun(client, handle, {
    onLine: (text) => {
      if (!jsonl) line(progress, `${prefix()}${text}`);
    },
    onEvent: (event) => {
      if (jsonl) printJson(ctx, { ...event, time: new Date().toISOString() });
    },
    onNoState: (message) =>
      line(ctx.io.stderr, `agent: ${message}; is a worker polling task queue "${how.taskQueue}"? (npm run worker)`),
  });
  if (jsonl) printJson(ctx, { type: 'result', time: new Date().toISOString(), result });
  else if (ctx.output === 'json') printJson(ctx, result);
  else {
    if (how.prefix) line(progress, `${prefix()}run ended`);
    for (const text of formatResult(result)) line(ctx.io.stdout, text);
  }
  return exitCodeOf(result);
}

export const result = defineCommand({
  spec,
  usage: usageText(
    'agent result ID [-o text|json|jsonl]\n' +
      '(exit code: 0 final answer, 4 stopped, 5 cancelled, 6 failed or terminated; see `agent help`)',
    spec,
  ),
  async run(args, ctx) {
    const client = await ctx.client();
    const handle = await existingRun(client, args.positionals[0]!);
    const { taskQueue } = await handle.describe();
    return followAndPrint(client, handle, ctx, { taskQueue });
  },
});
