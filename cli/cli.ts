#!/usr/bin/env node
// The operator's CLI, `agent <command> ...` (`npx agent` through node_modules/.bin/agent, which
// the build links: scripts/link-cli-bin.ts; or `npm run -s agent --`).
// Dispatches to a table of commands (one file each under commands/, loaded only when it runs, so
// a command pays for nothing it does not use); adding a command is one file plus one line in COMMANDS.
// Flags every command takes (-o, --address, --namespace, --profile) may also come before the command.
// Errors become one line on stderr and an exit code (the AgentError they are, client/agent-error.ts), never a stack trace.
import { readFileSync } from 'node:fs';
import nodeModule from 'node:module';
import * as path from 'node:path';
import { parseArgs, UsageError } from './cli-args';
import type { Command, CommandContext, CommandEntry, Io } from './cli-context';
import { connectClient, grpcCodeOf, line } from './cli-context';
import { AgentError, EXIT } from '../client/agent-error';
import { GLOBAL_FLAGS, GLOBAL_VALUE_FLAGS, jsonText, outputFormatOf } from './output';
import type { OutputFormat } from './output';
import { loadDotEnv } from '../runtime/dotenv';
import { temporalEnv } from '../runtime/temporal-env';
import type { TemporalEnv } from '../runtime/temporal-env';
import type { Client } from '@temporalio/client';

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'run',
    summary: 'start an agent run (and follow it with --wait)',
    load: async () => (await import('./commands/run')).run,
  },
  {
    name: 'status',
    summary: 'show where a run is: phase, step, budgets used and left, Temporal status',
    load: async () => (await import('./commands/status')).status,
  },
  {
    name: 'watch',
    summary: 'follow a run live, step by step, until it ends',
    load: async () => (await import('./commands/watch')).watch,
  },
  {
    name: 'result',
    summary: 'wait for a run to end and print its result',
    load: async () => (await import('./commands/result')).result,
  },
  {
    name: 'trace',
    summary: 'the step events of a run, rebuilt from its history (works after the run ended, without a worker)',
    load: async () => (await import('./commands/trace')).trace,
  },
  { name: 'list', summary: 'list recent agent runs', load: async () => (await import('./commands/list')).list },
  {
    name: 'cancel',
    summary: 'cancel a running run and wait for it to end (the kill switch)',
    load: async () => (await import('./commands/cancel')).cancel,
  },
  {
    name: 'approve',
    summary: 'approve the exact call a run is waiting on (see `agent status`)',
    load: async () => (await import('./commands/approve')).approve,
  },
  {
    name: 'reject',
    summary: 'reject the call a run is waiting on; the model sees the rejection',
    load: async () => (await import('./commands/reject')).reject,
  },
  {
    name: 'answer',
    summary: 'reply to a run that escalated to a person',
    load: async () => (await import('./commands/answer')).answer,
  },
  {
    name: 'chat',
    summary: 'talk with the agent as its customer: a conversation run in the terminal (lines from stdin)',
    load: async () => (await import('./commands/chat')).chat,
  },
  {
    name: 'say',
    summary: "send a conversation run the customer's message (--end ends the conversation)",
    load: async () => (await import('./commands/say')).say,
  },
  {
    name: 'extend',
    summary: "top up a run's budget (dollars, steps, tool calls, seconds, tokens), with a reason",
    load: async () => (await import('./commands/extend')).extend,
  },
  {
    name: 'limits',
    summary: 'the fleet-wide LLM rate limits: limits, granted, in use, queued, wait times',
    load: async () => (await import('./commands/limits')).limits,
  },
  {
    name: 'help',
    summary: 'show this help, or the usage of one command',
    load: async () => (await import('./commands/help')).help,
  },
];

const HINT = 'see `agent help`';

export async function main(argv: string[], io: Io, processEnv: NodeJS.ProcessEnv = process.env): Promise<number> {
  let env: TemporalEnv | undefined;
  let close: (() => Promise<void>) | undefined;
  try {
    const { name, args } = splitCommand(argv);
    if (name === '--version') return printVersion(io, args);
    const entry = name === undefined ? undefined : COMMANDS.find((c) => c.name === name);
    if (name === undefined) throw new UsageError('missing command', HINT);
    if (!entry) throw new UsageError(`unknown command "${name}"`, HINT);
    const command: Command = await entry.load();
    const hint = `see \`agent help ${entry.name}\``;
    const parsed = parseArgs(args, { ...command.spec, flags: { ...command.spec.flags, ...GLOBAL_FLAGS } }, hint);
    const flags = parsed.flags as { address?: string; namespace?: string; profile?: string } & Parameters<
      typeof outputFormatOf
    >[0];
    const warn = (text: string) => line(io.stderr, text);
    let output: OutputFormat;
    try {
      output = outputFormatOf(flags, warn);
    } catch (err) {
      throw err instanceof UsageError ? new UsageError(err.message, hint) : err;
    }
    if (parsed.help) {
      line(io.stdout, command.usage);
      return EXIT.OK;
    }
    env = temporalEnv(
      processEnv,
      { address: flags.address, namespace: flags.namespace, profile: flags.profile },
      (text) => warn(`agent: ${text}`),
    );
    const resolvedEnv = env;
    let connecting: Promise<Client> | undefined;
    const ctx: CommandContext = {
      io,
      env,
      output,
      deprecatedOutputFlag: flags.json ? 'json' : flags.jsonl ? 'jsonl' : undefined,
      commands: COMMANDS,
      client: () =>
        (connecting ??= connectClient(resolvedEnv, processEnv).then((c) => {
          close = c.close;
          return c.client;
        })),
    };
    return await command.run(parsed, ctx);
  } catch (err) {
    const { message, code } = await describeError(err, env);
    line(io.stderr, `agent: ${oneLine(message)}`);
    if (processEnv.AGENT_DEBUG && err instanceof Error && err.stack) line(io.stderr, err.stack);
    return code;
  } finally {
    await close?.();
  }
}

/**
 * The command's name and the rest: flags every command takes may come first (`agent -o json list`,
 * `agent --address h:7233 status ID`); they are handed to the command's parser with the rest.
 * `agent`, `agent -h` and `agent --help` are `agent help`; `agent --version` is the version.
 */
function splitCommand(argv: readonly string[]): { name?: string; args: string[] } {
  const leading: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--version' || word === '-v') return { name: '--version', args: [...leading, ...argv.slice(i + 1)] };
    if (word === '-h' || word === '--help') return { name: 'help', args: [...leading, ...argv.slice(i + 1)] };
    if (!word.startsWith('-') || word === '-' || word === '--') {
      if (word === '--') return { name: argv[i + 1], args: [...leading, ...argv.slice(i + 2)] };
      return { name: word, args: [...leading, ...argv.slice(i + 1)] };
    }
    const flagName = word.startsWith('--') ? word.split('=')[0]! : word.slice(0, 2);
    const known = GLOBAL_VALUE_FLAGS.has(flagName) || flagName === '--json' || flagName === '--jsonl';
    if (!known) throw new UsageError(`unknown flag ${flagName} before the command`, HINT);
    leading.push(word);
    // "--address h:7233" and "-o json" take the next word; "--address=h", "-ojson" carry it.
    const inline = word.includes('=') || (!word.startsWith('--') && word.length > 2);
    if (GLOBAL_VALUE_FLAGS.has(flagName) && !inline && i + 1 < argv.length) leading.push(argv[++i]!);
  }
  return { name: undefined, args: leading };
}

/** `agent --version`: this package's version and the Temporal SDK's, as text or JSON. */
function printVersion(io: Io, args: string[]): number {
  const parsed = parseArgs(args, { positionals: [], flags: GLOBAL_FLAGS }, HINT);
  const output = outputFormatOf(parsed.flags, (text) => line(io.stderr, text));
  const version = {
    version: packageVersion(path.join(__dirname, '..', '..', 'package.json')),
    sdk_version: packageVersion(require.resolve('@temporalio/client/package.json')),
    node_version: process.versions.node,
  };
  line(
    io.stdout,
    output === 'text'
      ? `agent ${version.version} (Temporal TypeScript SDK ${version.sdk_version}, Node.js ${version.node_version})`
      : jsonText(version, output),
  );
  return EXIT.OK;
}

function packageVersion(file: string): string {
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

export async function describeError(
  err: unknown,
  env: TemporalEnv | undefined,
): Promise<{ message: string; code: number }> {
  // Ours (usage, no such run, a bad run id or input, a refused answer...): each carries its exit code.
  if (err instanceof AgentError)
    return { message: err.hint ? `${err.message}; ${err.hint}` : err.message, code: err.exitCode };
  const { TerminatedFailure, TimeoutFailure, WorkflowFailedError } = await import('@temporalio/client');
  if (err instanceof WorkflowFailedError) {
    // Terminated, timed out or failed: Temporal ended it, so there is no AgentResult to show.
    const how =
      err.cause instanceof TerminatedFailure
        ? 'was terminated'
        : err.cause instanceof TimeoutFailure
          ? 'timed out'
          : 'failed';
    const why = firstLine(err.cause?.message || err.message);
    return { message: `the run ${how} without a result${why ? ` (${why})` : ''}`, code: EXIT.RUN_FAILED };
  }
  const grpcCode = grpcCodeOf(err);
  if (env && grpcCode === 14)
    return { message: `lost the connection to Temporal at ${env.address}; is it still running?`, code: EXIT.ERROR };
  if (env && grpcCode === 4) return { message: `Temporal at ${env.address} did not answer in time`, code: EXIT.ERROR };
  // An Update or signal to a run continuing as new, its retries spent (runtime/closing-run-retry.ts).
  if (grpcCode === 8 && /workflow is closing/.test(causeMessages(err)))
    return { message: 'the run was continuing as new: nothing was applied; send it again', code: EXIT.ERROR };
  return { message: firstLine(err instanceof Error ? err.message : String(err)), code: EXIT.ERROR };
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

/** The messages of an error and its causes, for matching the server's text under the SDK's wrapping. */
function causeMessages(err: unknown): string {
  const out: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++)
    out.push(String((e as { message?: unknown }).message ?? ''));
  return out.join('\n');
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.slice(0, 500);
}

if (require.main === module) {
  // Node >= 22.1 keeps compiled code on disk between runs (most of a cold start is loading the SDK);
  // a no-op on older Node.
  (nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
  process.once('SIGINT', () => {
    process.stderr.write(
      '\nagent: interrupted; runs keep going on the server (see `agent list`, stop one with `agent cancel ID`)\n',
    );
    process.exit(130);
  });
  try {
    loadDotEnv();
  } catch (err) {
    process.stderr.write(`agent: ${(err as Error).message}\n`);
    process.exit(1);
  }
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`agent: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
