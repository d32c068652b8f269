// `agent help [COMMAND]`: the usage of every command, or of one; the flags every command takes,
// the connection settings and the exit codes. -o json: the same as a document.
import { UsageError, usageRows, usageText } from '../cli-args';
import type { Command, CommandContext } from '../cli-context';
import { defineCommand, line, printJson } from '../cli-context';
import { EXIT } from '../../client/agent-error';
import { EXIT_CODE_LINES } from '../exit-codes';
import { GLOBAL_FLAGS } from '../output';

const spec = {
  positionals: [{ name: 'COMMAND', required: false, help: 'show only this command' }],
  flags: {},
} as const;

export function overview(ctx: CommandContext): string[] {
  const width = Math.max(...ctx.commands.map((c) => c.name.length));
  return [
    'agent: start, watch, inspect, list and cancel durable ReAct agent runs on Temporal',
    '',
    'usage: agent <command> [arguments] [flags]     (in this repository: npx agent ..., or npm run -s agent -- ...)',
    '       agent --version',
    '',
    'commands:',
    ...ctx.commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'flags of every command (before or after it):',
    ...usageRows({ positionals: [], flags: GLOBAL_FLAGS }),
    '',
    `Temporal: ${ctx.env.address}, namespace ${ctx.env.namespace}, task queue ${ctx.env.taskQueue}, Web UI ${ctx.env.uiUrl}`,
    '  (flags > TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_* > temporal.toml profile',
    '   (TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE) > defaults; TEMPORAL_TASK_QUEUE, TEMPORAL_UI_URL)',
    'exit codes:',
    ...EXIT_CODE_LINES.map((text) => `  ${text}`),
  ];
}

export const help = defineCommand({
  spec,
  usage: usageText('agent help [COMMAND]', spec),
  async run(args, ctx) {
    const name = args.positionals[0];
    const chosen = name === undefined ? ctx.commands : ctx.commands.filter((c) => c.name === name);
    if (chosen.length === 0) throw new UsageError(`unknown command "${name}"`, 'see `agent help`');
    const modules: Command[] = await Promise.all(chosen.map((c) => c.load()));
    if (ctx.output !== 'text') {
      printJson(ctx, {
        commands: chosen.map((c, i) => ({ name: c.name, summary: c.summary, usage: modules[i]!.usage })),
        exit_codes: Object.fromEntries(Object.entries(EXIT).map(([k, v]) => [k.toLowerCase(), v])),
      });
      return EXIT.OK;
    }
    if (name !== undefined) {
      line(ctx.io.stdout, modules[0]!.usage);
      return EXIT.OK;
    }
    for (const text of overview(ctx)) line(ctx.io.stdout, text);
    for (const module of modules) {
      line(ctx.io.stdout);
      line(ctx.io.stdout, module.usage);
    }
    return EXIT.OK;
  },
});
