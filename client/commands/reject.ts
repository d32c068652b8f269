// `agent reject ID [--reason TEXT]`: refuse the pending call. The run goes on: the model sees the
// rejection (and the reason) as an observation.
import { parseArgs, usageText } from '../cli-args';
import type { Command } from '../cli-context';
import { line } from '../cli-context';
import { CALL_FLAG, JSON_FLAG, sendAnswer } from '../approval-answer';

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: {
    reason: { kind: 'string', help: 'why; the model sees it (default "rejected by operator")' },
    call: CALL_FLAG,
    json: JSON_FLAG,
  },
} as const;

export const reject: Command = {
  name: 'reject',
  summary: 'reject the call a run is waiting on; the model sees the rejection',
  usage: usageText('agent reject ID [--reason TEXT] [--call CALL_ID] [--json]', spec),
  async run(argv, ctx) {
    const args = parseArgs(argv, spec, 'see `agent help reject`');
    if (args.help) {
      line(ctx.io.stdout, reject.usage);
      return 0;
    }
    const { reason, call, json } = args.flags;
    return sendAnswer(
      ctx,
      args.positionals[0]!,
      { decision: 'reject', id: call, ...(reason !== undefined ? { reason } : {}) },
      json === true,
    );
  },
};
