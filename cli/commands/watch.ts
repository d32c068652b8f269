// `agent watch ID`: live progress of a run, step by step (the `state` query, polled), each line
// time-stamped, until the run ends; then its result. A run that has already ended prints its
// steps and result at once. Ctrl-C stops watching, not the run. Exits like `result`.
import { existingRun } from '../../client/agent-client';
import { usageText } from '../cli-args';
import { defineCommand, line, progressOut } from '../cli-context';
import { runUrl } from '../../runtime/temporal-env';
import { followAndPrint } from './result';

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: {},
} as const;

function clock(date = new Date()): string {
  return date.toISOString().slice(11, 19);
}

export const watch = defineCommand({
  spec,
  usage: usageText(
    'agent watch ID [-o text|json|jsonl]\n' +
      '(-o jsonl: {"type":"watching",...}, then one line per step, phase and effect, then {"type":"result",...}; exits like `result`)',
    spec,
  ),
  async run(args, ctx) {
    const workflowId = args.positionals[0]!;
    const client = await ctx.client();
    const handle = await existingRun(client, workflowId);
    const description = await handle.describe();
    const url = runUrl(ctx.env, workflowId);
    if (ctx.output !== 'jsonl')
      line(progressOut(ctx), `${clock()} watching ${workflowId} (${description.status.name}; Web UI: ${url})`);
    return followAndPrint(client, handle, ctx, {
      taskQueue: description.taskQueue,
      prefix: () => `${clock()} `,
      header: {
        type: 'watching',
        time: new Date().toISOString(),
        workflow_id: workflowId,
        run_id: description.runId,
        temporal_status: description.status.name,
        url,
      },
    });
  },
});
