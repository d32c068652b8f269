// Whose run an MCP call belongs to, proven: the worker sends the run (its workflow id and the
// chain's first run id) with an HMAC of it under AGENT_MCP_RUN_SECRET, a secret only the worker and
// this project's MCP server hold (it never enters a call's input or the history). The server keeps
// an authenticated customer under a proven run only, so a caller that merely names a run key cannot
// act as that run's customer, and a new run under the same workflow id starts unauthenticated.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MCP_META } from '../../common/mcp/meta';

export const RUN_SECRET_ENV = 'AGENT_MCP_RUN_SECRET';

export function runSecret(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[RUN_SECRET_ENV]?.trim();
  return value ? value : undefined;
}

/** The HMAC-SHA256 (hex) of `<run key>\n<chain run id>` under the shared secret. */
export function runProof(secret: string, runKey: string, chain: string): string {
  return createHmac('sha256', secret).update(`${runKey}\n${chain}`).digest('hex');
}

/** Whether `proof` is the run's proof under `secret` (compared in constant time). */
export function runProven(secret: string, runKey: string, chain: string, proof: string): boolean {
  const expected = Buffer.from(runProof(secret, runKey, chain), 'utf8');
  const given = Buffer.from(proof, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The `_meta` entries naming the run (and proving it when the worker holds the secret). */
export function runMeta(
  runKey: string | undefined,
  chain: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  if (!runKey) return {};
  const secret = runSecret(env);
  return {
    // The run's records on the server (this project's retail server: the run's database).
    [MCP_META.runKey]: runKey,
    ...(chain ? { [MCP_META.runChain]: chain } : {}),
    ...(chain && secret ? { [MCP_META.runProof]: runProof(secret, runKey, chain) } : {}),
  };
}
