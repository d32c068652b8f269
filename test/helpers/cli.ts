// Runs the real CLI (`node dist/cli/cli.js`) as a child process against the test server.
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { DIST } from './harness';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Never rejects: the exit code is part of what a test checks. stdin is not a terminal (as in CI). */
export function runCli(
  env: TemporalEnv,
  args: string[],
  extraEnv: Record<string, string> = {},
  timeoutMs = 60_000,
  /** Sees stdout as it comes (e.g. to act once `watch` has attached). */
  onStdout?: (chunk: string) => void,
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [path.join(DIST, 'cli', 'cli.js'), ...args],
      {
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: env.address,
          TEMPORAL_NAMESPACE: env.namespace,
          TEMPORAL_TASK_QUEUE: env.taskQueue,
          ...extraEnv,
        },
        timeout: timeoutMs,
      },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : 1
          : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    if (onStdout) child.stdout?.on('data', (chunk: Buffer | string) => onStdout(String(chunk)));
    child.stdin?.end();
  });
}
