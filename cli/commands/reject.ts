// `agent reject ID [--reason TEXT]`: refuse the pending call. The run goes on: the model sees the
// rejection (and the reason) as an observation.
import { usageText } from '../cli-args';
import { defineCommand } from '../cli-context';
import { CALL_FLAG, sendAnswer } from '../approval-answer';

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: {
    reason: { kind: 'string', help: 'why; the model sees it (default "rejected by operator")' },
    call: CALL_FLAG,
  },
} as const;

export const reject = defineCommand({
  spec,
  usage: usageText('agent reject ID [--reason TEXT] [--call CALL_ID] [-o text|json|jsonl]', spec),
  run(args, ctx) {
    const { reason, call } = args.flags;
    return sendAnswer(ctx, args.positionals[0]!, {
      decision: 'reject',
      id: call,
      ...(reason !== undefined ? { reason } : {}),
    });
  },
});
