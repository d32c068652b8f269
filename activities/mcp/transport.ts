// The transport to one MCP server for the official SDK's client: a stdio process (spawned with the
// environment variables the config names, read from the worker's environment) or streamable HTTP
// (headers whose values come from the worker's environment). Secrets stay on the worker: the config
// names variables, and a missing one is a one-line error that says which.
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpConnection } from '../../common/mcp/config';
import { readEnv } from '../../runtime/env-vars';

export type { McpConnection } from '../../common/mcp/config';

export class McpConfigError extends Error {}

function fromEnv(name: string, env: NodeJS.ProcessEnv, what: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new McpConfigError(`${what}: the worker has no ${name} set`);
  return value;
}

/**
 * The run's config names what the worker spawns or calls: only programs and URLs the worker's own
 * environment allows (AGENT_MCP_COMMANDS, AGENT_MCP_URLS), so starting a run is not running code.
 */
function checkAllowed(server: string, connection: McpConnection, env: NodeJS.ProcessEnv): void {
  if ('command' in connection) {
    if (!(readEnv('AGENT_MCP_COMMANDS', env) ?? []).includes(connection.command))
      throw new McpConfigError(
        `MCP server ${server}: the command ${connection.command.slice(0, 200)} is not in this worker's AGENT_MCP_COMMANDS`,
      );
    return;
  }
  if (!(readEnv('AGENT_MCP_URLS', env) ?? []).some((prefix) => connection.url.startsWith(prefix)))
    throw new McpConfigError(
      `MCP server ${server}: ${connection.url.slice(0, 200)} is not in this worker's AGENT_MCP_URLS`,
    );
}

/**
 * The values this worker sends the server as secrets (its headers' and its spawned process's
 * variables): masked in every error text and result of the server's activities, since a server
 * may echo what it received.
 */
export function connectionSecrets(connection: McpConnection, env: NodeJS.ProcessEnv = process.env): string[] {
  const names = 'command' in connection ? (connection.env ?? []) : Object.values(connection.headers_from_env ?? {});
  return names.map((name) => env[name] ?? '').filter((value) => value.length > 0);
}

export function transportFor(server: string, connection: McpConnection, env: NodeJS.ProcessEnv): Transport {
  checkAllowed(server, connection, env);
  if ('command' in connection) {
    const passed = Object.fromEntries(
      (connection.env ?? []).map((name) => [name, fromEnv(name, env, `MCP server ${server}: env`)]),
    );
    return new StdioClientTransport({
      command: connection.command,
      args: connection.args ?? [],
      env: { ...getDefaultEnvironment(), ...passed },
      ...(connection.cwd !== undefined ? { cwd: connection.cwd } : {}),
      stderr: 'ignore',
    });
  }
  const headers = Object.fromEntries(
    Object.entries(connection.headers_from_env ?? {}).map(([header, name]) => [
      header,
      fromEnv(name, env, `MCP server ${server}: header ${header}`),
    ]),
  );
  return new StreamableHTTPClientTransport(new URL(connection.url), { requestInit: { headers } });
}
