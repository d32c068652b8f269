// `agent chat` as a customer uses it in a test: a child process with lines piped into its stdin.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { DIST } from './harness';

/** `agent chat ARGS` with `lines` piped into its stdin, on `env`; never rejects (killed after 90 s). */
export function chat(
  env: Pick<TemporalEnv, 'address' | 'namespace' | 'taskQueue'>,
  args: string[],
  lines: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [path.join(DIST, 'cli', 'cli.js'), 'chat', ...args], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
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
