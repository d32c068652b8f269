// `agent approve ID`: let the call that waits for approval run (or tell an escalated run to go on).
import { usageText } from '../cli-args';
import { defineCommand } from '../cli-context';
import { CALL_FLAG, sendAnswer } from '../approval-answer';

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: { call: CALL_FLAG },
} as const;

export const approve = defineCommand({
  spec,
  usage: usageText('agent approve ID [--call CALL_ID] [-o text|json|jsonl]', spec),
  run: (args, ctx) => sendAnswer(ctx, args.positionals[0]!, { decision: 'approve', id: args.flags.call }),
});
