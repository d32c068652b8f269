// Runs Temporal's own CLI (not agent's) against a test server: what any client of the namespace can send.
import { execFile } from 'node:child_process';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { findOrBuildTemporalCli } from '../../local-servers/temporal-cli';

export interface TemporalCliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Never rejects: the exit code is part of what a test checks. */
export async function temporalCli(env: TemporalEnv, args: string[]): Promise<TemporalCliResult> {
  const cli = await findOrBuildTemporalCli(() => undefined);
  return new Promise((resolve) => {
    execFile(
      cli,
      [...args, '--address', env.address, '--namespace', env.namespace, '--command-timeout', '20s'],
      { timeout: 30_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** `temporal workflow reset --type FirstWorkflowTask`: an operator re-does a run from its start. */
export function resetToFirstWorkflowTask(
  env: TemporalEnv,
  workflowId: string,
  reason: string,
): Promise<TemporalCliResult> {
  return temporalCli(env, [
    'workflow',
    'reset',
    '--workflow-id',
    workflowId,
    '--type',
    'FirstWorkflowTask',
    '--reason',
    reason,
  ]);
}
