// The operator's CLI: `npm run -s agent -- <command> ...`. Dispatches to a table of commands (one
// file each under commands/); adding a command is one file plus one line in COMMANDS.
// Errors become one line on stderr and an exit code (2 usage, 1 runtime), never a stack trace.
import type { Client } from '@temporalio/client';
import { TerminatedFailure, TimeoutFailure, WorkflowFailedError } from '@temporalio/client';
import { InvalidRunIdError, InvalidRunInputError, RunNotFoundError } from './agent-client';
import { UsageError } from './cli-args';
import type { Command, CommandContext, Io } from './cli-context';
import { CliError, connectClient, grpcCodeOf, line } from './cli-context';
import { temporalEnv } from '../runtime/temporal-env';
import type { TemporalEnv } from '../runtime/temporal-env';
import { cancel } from './commands/cancel';
import { help } from './commands/help';
import { list } from './commands/list';
import { result } from './commands/result';
import { run } from './commands/run';
import { status } from './commands/status';
import { approve } from './commands/approve';
import { reject } from './commands/reject';
import { answer } from './commands/answer';
import { trace } from './commands/trace';
import { watch } from './commands/watch';

export const COMMANDS: readonly Command[] = [
  run,
  status,
  watch,
  result,
  trace,
  list,
  cancel,
  approve,
  reject,
  answer,
  help,
];

export async function main(argv: string[], io: Io, processEnv: NodeJS.ProcessEnv = process.env): Promise<number> {
  let env: TemporalEnv | undefined;
  let close: (() => Promise<void>) | undefined;
  try {
    env = temporalEnv(processEnv);
    const resolvedEnv = env;
    let connecting: Promise<Client> | undefined;
    const ctx: CommandContext = {
      io,
      env,
      commands: COMMANDS,
      client: () =>
        (connecting ??= connectClient(resolvedEnv, processEnv).then((c) => {
          close = c.close;
          return c.client;
        })),
    };

    const [name, ...rest] = argv;
    if (name === undefined) throw new UsageError('missing command', 'see `agent help`');
    if (name === '--help' || name === '-h') return await help.run(rest, ctx);
    if (name.startsWith('-'))
      throw new UsageError(`unknown flag ${name} (flags go after the command)`, 'see `agent help`');
    const command = COMMANDS.find((c) => c.name === name);
    if (!command) throw new UsageError(`unknown command "${name}"`, 'see `agent help`');
    return await command.run(rest, ctx);
  } catch (err) {
    const { message, code } = describeError(err, env);
    line(io.stderr, `agent: ${oneLine(message)}`);
    if (processEnv.AGENT_DEBUG && err instanceof Error && err.stack) line(io.stderr, err.stack);
    return code;
  } finally {
    await close?.();
  }
}

function describeError(err: unknown, env: TemporalEnv | undefined): { message: string; code: number } {
  if (err instanceof UsageError) return { message: err.hint ? `${err.message}; ${err.hint}` : err.message, code: 2 };
  if (err instanceof CliError) return { message: err.message, code: err.exitCode };
  if (err instanceof RunNotFoundError) return { message: err.message, code: 1 };
  if (err instanceof InvalidRunIdError) return { message: err.message, code: 2 };
  if (err instanceof InvalidRunInputError) return { message: err.message, code: 2 };
  if (err instanceof WorkflowFailedError) {
    // Terminated, timed out or failed: Temporal ended it, so there is no AgentResult to show.
    const how =
      err.cause instanceof TerminatedFailure
        ? 'was terminated'
        : err.cause instanceof TimeoutFailure
          ? 'timed out'
          : 'failed';
    const why = firstLine(err.cause?.message || err.message);
    return { message: `the run ${how} without a result${why ? ` (${why})` : ''}`, code: 1 };
  }
  const grpcCode = grpcCodeOf(err);
  if (env && grpcCode === 14)
    return { message: `lost the connection to Temporal at ${env.address}; is it still running?`, code: 1 };
  if (env && grpcCode === 4) return { message: `Temporal at ${env.address} did not answer in time`, code: 1 };
  return { message: firstLine(err instanceof Error ? err.message : String(err)), code: 1 };
}

/**
 * What reaches stderr is one readable line whatever the input echoed back: control characters
 * (a newline in a run id) and bidi controls are escaped, and an echoed 200 KB argument is cut.
 */
export function oneLine(text: string, max = 300): string {
  const escaped = text
    .replace(/[\p{Cc}\p{Cs}\u2028\u2029]/gu, (c) => JSON.stringify(c).slice(1, -1))
    .replace(
      /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  const chars = Array.from(escaped);
  return chars.length > max ? `${chars.slice(0, max).join('')}… (${chars.length - max} more characters)` : escaped;
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.slice(0, 500);
}

if (require.main === module) {
  process.once('SIGINT', () => {
    process.stderr.write(
      '\nagent: interrupted; runs keep going on the server (see `agent list`, stop one with `agent cancel ID`)\n',
    );
    process.exit(130);
  });
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`agent: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
