// `agent chat` as a customer uses it in a test: a child process with lines piped into its stdin.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { DIST } from './harness';
import { spawnOnTerminal } from './pseudo-terminal';

/** `agent chat ARGS` with `lines` piped into its stdin, on `env`; never rejects (killed after 90 s). */
export function chat(
  env: Pick<TemporalEnv, 'address' | 'namespace' | 'taskQueue'>,
  args: string[],
  lines: string,
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [path.join(DIST, 'cli', 'cli.js'), 'chat', ...args], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
      ...extraEnv,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(lines);
  const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code: code ?? -1, stdout, stderr });
    }),
  );
}

/** A running `agent chat` the test types into as it reads what it printed. */
export interface ChatSession {
  /** Sends one line (as if typed and Enter pressed). */
  type(text: string): void;
  /** Resolves once the output (stdout and stderr) matches `pattern`; rejects if the chat ends first. */
  shows(pattern: RegExp): Promise<void>;
  /** Closes stdin (in a terminal: Ctrl-D). */
  end(): void;
  /** output: stdout and stderr as they came; stdout: stdout alone (in a terminal, both). */
  done: Promise<{ code: number; output: string; stdout: string }>;
}

/**
 * `agent chat ARGS` on `env`, its stdin a pipe the test writes to line by line, or, with
 * `terminal`, a pseudo-terminal (util-linux `script`): the chat then reads a TTY as a person's
 * would, and its stdout and stderr are the terminal's output. Killed after 90 s.
 */
export function chatSession(
  env: Pick<TemporalEnv, 'address' | 'namespace' | 'taskQueue'>,
  args: string[],
  opts: { terminal?: boolean; extraEnv?: Record<string, string> } = {},
): ChatSession {
  const command = [process.execPath, path.join(DIST, 'cli', 'cli.js'), 'chat', ...args];
  const child = opts.terminal
    ? spawnOnTerminal(command, { ...process.env, ...envOf(env), ...opts.extraEnv })
    : spawn(command[0]!, command.slice(1), { env: { ...process.env, ...envOf(env), ...opts.extraEnv } });
  let output = '';
  let stdout = '';
  const watchers = new Set<() => void>();
  const onData = (d: Buffer) => {
    output += d.toString();
    for (const w of watchers) w();
  };
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    onData(d);
  });
  child.stderr.on('data', onData);
  const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  let closed = false;
  const done = new Promise<{ code: number; output: string; stdout: string }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(killer);
      closed = true;
      for (const w of watchers) w();
      resolve({ code: code ?? -1, output, stdout });
    }),
  );
  return {
    type: (text) => child.stdin.write(`${text}${opts.terminal ? '\r' : '\n'}`),
    // In a terminal, Ctrl-D at the start of a line is the end of input.
    end: () => (opts.terminal ? child.stdin.write('\x04') : child.stdin.end()),
    shows: (pattern) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pattern.test(output)) {
            watchers.delete(check);
            resolve();
          } else if (closed) {
            watchers.delete(check);
            reject(new Error(`the chat ended without showing ${pattern}:\n${output}`));
          }
        };
        watchers.add(check);
        check();
      }),
    done,
  };
}

function envOf(env: Pick<TemporalEnv, 'address' | 'namespace' | 'taskQueue'>): NodeJS.ProcessEnv {
  return { TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: env.namespace, TEMPORAL_TASK_QUEUE: env.taskQueue };
}
