// The one masking step between an MCP server and everything else: whatever a server answers (a
// tool listing, a call's result, a lookup's answer) and every error of a request to it passes
// here before any activity reads it, so a server that echoes what it received (a header's token in
// a tool's description or schema, in a result, in an error page) puts no secret into history, a
// decide input or a model request. It runs before anything cuts text short: a secret cut in two
// would no longer match.
import { scrubSecrets, secretsFromEnv } from '../secrets';
import type { McpConnection } from './transport';
import { connectionSecrets } from './transport';

/** What the worker holds as secrets when it talks to this server: the connection's values and its own. */
export function mcpSecrets(connection: McpConnection, env: NodeJS.ProcessEnv = process.env): string[] {
  return [...connectionSecrets(connection, env), ...secretsFromEnv(env)];
}

/** `value` with every secret masked in each string, object key included, at any depth. */
export function maskedValue<T>(value: T, secrets: readonly string[]): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrubSecrets(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [scrubSecrets(k, secrets), walk(inner)]));
    return v;
  };
  return walk(value) as T;
}

/** The error with every secret masked in its message, stack, data and causes (it goes into history). */
export function maskedError(err: unknown, secrets: readonly string[], depth = 0): unknown {
  if (!(err instanceof Error) || depth > 5) return err;
  err.message = scrubSecrets(err.message, secrets);
  if (err.stack) err.stack = scrubSecrets(err.stack, secrets);
  const withData = err as Error & { data?: unknown };
  if (withData.data !== undefined) withData.data = maskedValue(withData.data, secrets);
  if (err.cause !== undefined) err.cause = maskedError(err.cause, secrets, depth + 1);
  return err;
}
