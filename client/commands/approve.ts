// `agent approve ID`: let the call that waits for approval run (or tell an escalated run to go on).
import { parseArgs, usageText } from '../cli-args';
import type { Command } from '../cli-context';
import { line } from '../cli-context';
import { CALL_FLAG, JSON_FLAG, sendAnswer } from '../approval-answer';

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: { call: CALL_FLAG, json: JSON_FLAG },
} as const;

export const approve: Command = {
  name: 'approve',
  summary: 'approve the exact call a run is waiting on (see `agent status`)',
  usage: usageText('agent approve ID [--call CALL_ID] [--json]', spec),
  async run(argv, ctx) {
    const args = parseArgs(argv, spec, 'see `agent help approve`');
    if (args.help) {
      line(ctx.io.stdout, approve.usage);
      return 0;
    }
    return sendAnswer(
      ctx,
      args.positionals[0]!,
      { decision: 'approve', id: args.flags.call },
      args.flags.json === true,
    );
  },
};
