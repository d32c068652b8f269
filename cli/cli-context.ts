// What every CLI command gets: where to write, the output format, the Temporal settings, and a
// lazily opened client. Also the error type commands throw for "this did not work" (one line on
// stderr, exit 1). Nothing here loads the Temporal client until a command connects (cold start).
import net from 'node:net';
import type { Client, Connection } from '@temporalio/client';
import type { ArgsSpec, ParsedArgs } from './cli-args';
import type { OutputFormat } from './output';
import { jsonText } from './output';
import { terminalSafe } from './terminal-text';
import { connectionOptions, unreachableMessage } from '../runtime/temporal-env';
import type { TemporalEnv } from '../runtime/temporal-env';
import { AgentError } from '../client/agent-error';
import { clientTracingFromEnv } from '../client/client-tracing';

export interface Writable {
  write(text: string): unknown;
}

export interface Io {
  stdout: Writable;
  stderr: Writable;
}

/** A command's module (cli/commands/*.ts): its argument table, usage text and what it does. */
export interface Command<S extends ArgsSpec = ArgsSpec> {
  spec: S;
  /** Full usage text: synopsis, arguments and flags. */
  usage: string;
  /** Returns the exit code. Throws UsageError (exit 2) or AgentError (exit 1) for bad input. */
  run(args: ParsedArgs<S>, ctx: CommandContext): Promise<number>;
}

/** Keeps the flags' types of `spec` in `run` (a plain annotation would widen them). */
export function defineCommand<S extends ArgsSpec>(command: Command<S>): Command {
  return command as unknown as Command;
}

/** A line of `agent help`; the module is loaded only when the command runs (cold start). */
export interface CommandEntry {
  name: string;
  /** One line for `agent help`. */
  summary: string;
  load(): Promise<Command>;
}

export interface CommandContext {
  io: Io;
  env: TemporalEnv;
  /** -o: text, json or jsonl. */
  output: OutputFormat;
  /** The deprecated spelling used for the output, if any (trace --jsonl keeps its old keys). */
  deprecatedOutputFlag?: 'json' | 'jsonl';
  /** Every command, for `help`. */
  commands: readonly CommandEntry[];
  /** Connects on first use (short timeout); the caller closes it when the command ends. */
  client(): Promise<Client>;
}

/** Where text meant for a person goes: stdout, unless stdout carries JSON. */
export function progressOut(ctx: CommandContext): Writable {
  return ctx.output === 'text' ? ctx.io.stdout : ctx.io.stderr;
}

/** Writes one JSON value in the context's format (json: indented; jsonl: one line). */
export function printJson(ctx: CommandContext, value: unknown): void {
  line(ctx.io.stdout, jsonText(value, ctx.output));
}

/** How long the CLI waits for the server before saying it cannot reach it. */
export const CONNECT_TIMEOUT_MS = 3_000;

export function unreachable(env: TemporalEnv): AgentError {
  return new AgentError(unreachableMessage(env));
}

export async function connectClient(
  env: TemporalEnv,
  processEnv: NodeJS.ProcessEnv = process.env,
): Promise<{ client: Client; close(): Promise<void> }> {
  // A refused port fails in milliseconds over plain TCP; gRPC would wait for its whole timeout.
  if (!(await tcpOpen(env.address, CONNECT_TIMEOUT_MS))) throw unreachable(env);
  // Loaded here, not at the top: commands that never connect (help, --query) start faster.
  const { Connection } = await import('@temporalio/client');
  const { newClient } = await import('../client/connect');
  const { clientGrpcInterceptors } = await import('../runtime/closing-run-retry');
  let connection: Connection;
  try {
    connection = await Connection.connect({
      ...connectionOptions(env),
      interceptors: clientGrpcInterceptors(),
      connectTimeout: CONNECT_TIMEOUT_MS,
    });
  } catch {
    throw unreachable(env);
  }
  const close = () => connection.close().catch(() => undefined);
  try {
    // Fail here, clearly, rather than report every run as unknown in a namespace that does not exist.
    await connection.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
      connection.workflowService.describeNamespace({ namespace: env.namespace }),
    );
  } catch (err) {
    await close();
    if ((err as { code?: number }).code === 5) {
      throw new AgentError(
        `namespace "${env.namespace}" does not exist at ${env.address} (--namespace, TEMPORAL_NAMESPACE or the profile)`,
      );
    }
    throw unreachable(env);
  }
  // Spans exported when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT): the run's trace starts here.
  let tracing: Awaited<ReturnType<typeof clientTracingFromEnv>>;
  try {
    tracing = await clientTracingFromEnv(processEnv);
  } catch (err) {
    await close();
    throw err;
  }
  // Encrypts and decrypts payloads when AGENT_CODEC_KEYS / AGENT_CODEC_KEY_FILE is set, like the worker.
  return {
    client: newClient(connection, env.namespace, processEnv, tracing?.interceptors),
    close: async () => {
      await close();
      await tracing?.shutdown();
    },
  };
}

/** True if something accepts TCP connections at host:port; odd addresses are left to gRPC to judge. */
function tcpOpen(address: string, timeoutMs: number): Promise<boolean> {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(address);
  if (!match) return Promise.resolve(true);
  const host = match[1] ?? match[2]!;
  const port = Number(match[3]);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(open);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** `fn` with a gRPC deadline, so a call that nobody answers (a query without a worker) fails in time. */
export function withDeadline<T>(client: Client, ms: number, fn: () => Promise<T>): Promise<T> {
  return client.connection.withDeadline(Date.now() + ms, fn);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Every line the CLI prints passes here: nothing written can drive the terminal (terminal-text.ts). */
export function line(out: Writable, text = ''): void {
  out.write(terminalSafe(text) + '\n');
}

/** The gRPC status code of an error or of one of its causes (the SDK wraps them). */
export function grpcCodeOf(err: unknown): number | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

/** gRPC DEADLINE_EXCEEDED: a call under withDeadline ran out of time. */
export function isDeadlineExceeded(err: unknown): boolean {
  return grpcCodeOf(err) === 4;
}
