// `agent answer ID TEXT`: reply to a run whose model escalated to a person; the model sees the
// text as an observation and goes on.
import { UsageError, usageText } from '../cli-args';
import { defineCommand } from '../cli-context';
import { CALL_FLAG, sendAnswer } from '../approval-answer';

const spec = {
  positionals: [
    { name: 'ID', required: true, help: 'workflow id of the run' },
    { name: 'TEXT', required: true, help: 'your reply to the escalation (quote it)' },
  ],
  flags: { call: CALL_FLAG },
} as const;

export const answer = defineCommand({
  spec,
  usage: usageText('agent answer ID TEXT [--call CALL_ID] [-o text|json|jsonl]', spec),
  async run(args, ctx) {
    const text = args.positionals[1]!;
    if (text.trim() === '') throw new UsageError('the answer must not be empty', 'see `agent help answer`');
    return sendAnswer(ctx, args.positionals[0]!, { decision: 'answer', id: args.flags.call, text });
  },
});
