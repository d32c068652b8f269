// The worker's MCP connections against this project's server over HTTP (a real process): calls
// share one connection; a connection lost to a server restart is replaced inside the next call,
// which succeeds; a call the server refuses leaves the connection in use; close() ends them all.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpPool } from '../../activities/mcp/pool';
import { connectionBroken } from '../../activities/mcp/connect';
import { DIST } from '../helpers/harness';

const MAIN = path.join(DIST, 'mcp-server', 'main.js');
const ENV = { ...process.env, AGENT_MCP_URLS: 'http://127.0.0.1:' };
const FAILURE = { broken: connectionBroken, stale: connectionBroken };

let child: ChildProcess | undefined;
after(() => child?.kill('SIGKILL'));

async function startServer(port = 0): Promise<number> {
  const proc = spawn(process.execPath, [MAIN, '--domain', 'support', '--http', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child = proc;
  const url = await new Promise<string>((resolve, reject) => {
    let log = '';
    proc.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
      const found = /at (http:\/\/\S+)/.exec(log);
      if (found) resolve(found[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`mcp server exited ${code}: ${log}`)));
  });
  return Number(new URL(url).port);
}

async function killServer(): Promise<void> {
  const proc = child!;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGKILL');
  await exited;
}

const billing = (client: Client) =>
  client.callTool({
    name: 'get_user_billing',
    arguments: { user_id: 42 },
    _meta: { principal: '42' },
  }) as Promise<CallToolResult>;

describe("the worker's MCP connections", () => {
  it('are shared by calls, survive a refusal, and are replaced inside the call that finds one lost', async () => {
    const port = await startServer();
    const connection = { url: `http://127.0.0.1:${port}/mcp` };
    const pool = new McpPool(ENV);
    const signal = new AbortController().signal;
    const call = () =>
      pool.with(
        'support',
        connection,
        signal,
        'run',
        async (client) => ({ client, result: await billing(client) }),
        FAILURE,
      );
    try {
      const first = await call();
      const second = await call();
      assert.equal(first.result.isError, undefined);
      assert.equal(second.client, first.client, 'one connection for both calls');
      // A JSON-RPC error the server answers with is not a broken connection.
      // (this server serves no prompts: MethodNotFound)
      await assert.rejects(
        pool.with('support', connection, signal, 'run', (client) => client.listPrompts(), FAILURE),
        {
          code: -32601,
        },
      );
      assert.equal((await call()).client, first.client, 'kept after a refusal');

      await killServer();
      await startServer(port); // its sessions are gone with it
      const after = await call();
      assert.equal(after.result.isError, undefined, 'the call that found its connection lost succeeded');
      assert.notEqual(after.client, first.client, 'on a new connection');

      await pool.close();
      assert.notEqual((await call()).client, after.client, 'close() ended the pooled connection');
    } finally {
      await pool.close();
    }
  });
});
