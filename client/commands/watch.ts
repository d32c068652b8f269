// `agent watch ID`: live progress of a run, step by step (the `state` query, polled), each line
// time-stamped, until the run ends; then its result. A run that has already ended prints its
// steps and result at once. Ctrl-C stops watching, not the run.
import { existingRun } from '../agent-client';
import { parseArgs, usageText } from '../cli-args';
import type { Command } from '../cli-context';
import { line } from '../cli-context';
import { followRun } from '../follow-run';
import { formatResult } from '../format';
import { runUrl } from '../../runtime/temporal-env';

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: {},
} as const;

function clock(date = new Date()): string {
  return date.toISOString().slice(11, 19);
}

export const watch: Command = {
  name: 'watch',
  summary: 'follow a run live, step by step, until it ends',
  usage: usageText('agent watch ID', spec),
  async run(argv, ctx) {
    const args = parseArgs(argv, spec, 'see `agent help watch`');
    if (args.help) {
      line(ctx.io.stdout, watch.usage);
      return 0;
    }
    const workflowId = args.positionals[0]!;
    const client = await ctx.client();
    const handle = await existingRun(client, workflowId);
    const description = await handle.describe();
    const out = ctx.io.stdout;
    line(out, `${clock()} watching ${workflowId} (${description.status.name}; Web UI: ${runUrl(ctx.env, workflowId)})`);
    const result = await followRun(client, handle, {
      onLine: (text) => line(out, `${clock()} ${text}`),
      onNoState: (message) =>
        line(
          ctx.io.stderr,
          `agent: ${message}; is a worker polling task queue "${description.taskQueue}"? (npm run worker)`,
        ),
    });
    line(out, `${clock()} run ended`);
    for (const text of formatResult(result)) line(out, text);
    return 0;
  },
};
