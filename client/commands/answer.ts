// `agent answer ID TEXT`: reply to a run whose model escalated to a person; the model sees the
// text as an observation and goes on.
import { parseArgs, UsageError, usageText } from '../cli-args';
import type { Command } from '../cli-context';
import { line } from '../cli-context';
import { CALL_FLAG, JSON_FLAG, sendAnswer } from '../approval-answer';

const spec = {
  positionals: [
    { name: 'ID', required: true, help: 'workflow id of the run' },
    { name: 'TEXT', required: true, help: 'your reply to the escalation (quote it)' },
  ],
  flags: { call: CALL_FLAG, json: JSON_FLAG },
} as const;

export const answer: Command = {
  name: 'answer',
  summary: 'reply to a run that escalated to a person',
  usage: usageText('agent answer ID TEXT [--call CALL_ID] [--json]', spec),
  async run(argv, ctx) {
    const args = parseArgs(argv, spec, 'see `agent help answer`');
    if (args.help) {
      line(ctx.io.stdout, answer.usage);
      return 0;
    }
    const text = args.positionals[1]!;
    if (text.trim() === '') throw new UsageError('the answer must not be empty', 'see `agent help answer`');
    return sendAnswer(
      ctx,
      args.positionals[0]!,
      { decision: 'answer', id: args.flags.call, text },
      args.flags.json === true,
    );
  },
};
