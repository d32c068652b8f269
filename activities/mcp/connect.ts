// How an MCP activity reaches its server: on the worker's pooled connection for that server's
// config, connecting again once when a reused connection turns out broken.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpConnection } from '../../common/mcp/config';
import { mcpPool } from './pool';
import { scrubSecrets } from '../secrets';
import { connectionSecrets, McpConfigError } from './transport';

export { McpConfigError } from './transport';
export type { McpConnection } from '../../common/mcp/config';

/** Runs `use` with a client connected to the server (the worker's pooled connection). */
export function withMcpClient<T>(
  server: string,
  connection: McpConnection,
  signal: AbortSignal,
  use: (client: Client) => Promise<T>,
): Promise<T> {
  return mcpPool
    .with(server, connection, signal, use, { broken: connectionBroken, stale: connectionLost })
    .catch((err: unknown) => {
      // A server may echo a header it received in its error page: the error goes into history.
      if (err instanceof Error) {
        const secrets = connectionSecrets(connection);
        err.message = scrubSecrets(err.message, secrets);
        if (err.stack) err.stack = scrubSecrets(err.stack, secrets);
      }
      throw err;
    });
}

/** `data` with the connection's secret values masked in every string (a server may echo them in a result). */
export function withoutConnectionSecrets(data: unknown, connection: McpConnection): unknown {
  const secrets = connectionSecrets(connection);
  if (secrets.length === 0) return data;
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return scrubSecrets(value, secrets);
    if (Array.isArray(value)) return value.map(walk);
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrubSecrets(k, secrets), walk(v)]));
    return value;
  };
  return walk(data);
}

/**
 * The connection failed, not the request: closed, timed out, a lost HTTP session, a dead process.
 * A JSON-RPC error the server answered with leaves it usable; so does a config refusal (it never connected).
 */
export function connectionBroken(err: unknown): boolean {
  if (err instanceof McpConfigError) return false;
  if (err instanceof McpError) return err.code === ErrorCode.ConnectionClosed || err.code === ErrorCode.RequestTimeout;
  return true;
}

/** Broken, and not by a request that ran out of time (a second try would outlast the activity's timeout). */
function connectionLost(err: unknown): boolean {
  return connectionBroken(err) && !(err instanceof McpError && err.code === ErrorCode.RequestTimeout);
}
