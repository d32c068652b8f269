// `agent help [COMMAND]`: the usage of every command, or of one.
import { parseArgs, UsageError, usageText } from '../cli-args';
import type { Command, CommandContext } from '../cli-context';
import { line } from '../cli-context';

const spec = {
  positionals: [{ name: 'COMMAND', required: false, help: 'show only this command' }],
  flags: {},
} as const;

export function overview(ctx: CommandContext): string[] {
  const width = Math.max(...ctx.commands.map((c) => c.name.length));
  return [
    'agent: start, watch, inspect, list and cancel durable ReAct agent runs on Temporal',
    '',
    'usage: npm run -s agent -- <command> [arguments] [flags]',
    '',
    'commands:',
    ...ctx.commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    `Temporal: ${ctx.env.address}, namespace ${ctx.env.namespace}, task queue ${ctx.env.taskQueue}, Web UI ${ctx.env.uiUrl}`,
    '  (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE, TEMPORAL_UI_URL)',
    'Exit codes: 0 done, 1 runtime error (unknown run, no server, ...), 2 bad usage.',
  ];
}

export const help: Command = {
  name: 'help',
  summary: 'show this help, or the usage of one command',
  usage: usageText('agent help [COMMAND]', spec),
  async run(argv, ctx) {
    const args = parseArgs(argv, spec, 'see `agent help`');
    const name = args.positionals[0];
    if (name !== undefined) {
      const command = ctx.commands.find((c) => c.name === name);
      if (!command) throw new UsageError(`unknown command "${name}"`, 'see `agent help`');
      line(ctx.io.stdout, command.usage);
      return 0;
    }
    for (const text of overview(ctx)) line(ctx.io.stdout, text);
    for (const command of ctx.commands) {
      line(ctx.io.stdout);
      line(ctx.io.stdout, command.usage);
    }
    return 0;
  },
};
