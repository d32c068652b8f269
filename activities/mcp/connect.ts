// How an MCP activity reaches its server: on the worker's pooled connection for that server's
// config and run (a listing's: none), connecting again once when a reused connection turns out broken.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpConnection } from '../../common/mcp/config';
import { mcpPool } from './pool';
import { maskedError, maskedValue, mcpSecrets } from './masked';
import { McpConfigError } from './transport';

export { McpConfigError } from './transport';
export type { McpConnection } from '../../common/mcp/config';

/**
 * Runs `use` with a client connected to the server (the worker's pooled connection for the
 * server and `scope`: a run's calls pass the run, so no session serves two runs). What `use`
 * returns (the server's answers) and what it throws pass the one masking step (masked.ts).
 */
export async function withMcpClient<T>(
  server: string,
  connection: McpConnection,
  signal: AbortSignal,
  scope: string,
  use: (client: Client) => Promise<T>,
): Promise<T> {
  const secrets = mcpSecrets(connection);
  try {
    const answer = await mcpPool.with(server, connection, signal, scope, use, {
      broken: connectionBroken,
      stale: connectionLost,
    });
    return maskedValue(answer, secrets);
  } catch (err) {
    throw maskedError(err, secrets);
  }
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
