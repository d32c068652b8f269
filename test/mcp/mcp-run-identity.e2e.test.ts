// Second adversary, findings 1a and 1b: whom a run acts for on this project's MCP server must not
// leak to another server nor into another run. Real dev server, real worker processes (one without
// AGENT_MCP_RUN_SECRET, one with it), the scripted model, this project's retail MCP server over HTTP
// (a separate process) and a third-party MCP server on loopback that records each call's `_meta`.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { serveHttp } from '../../mcp-server/http';
import type { McpHttpServer } from '../../mcp-server/http';
import type { McpConfig } from '../../common/mcp/config';
import type { AgentInput } from '../../common/types';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { final, tool } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { DIST } from '../helpers/harness';

const MCP_MAIN = path.join(DIST, 'mcp-server', 'main.js');
const RETAIL_DB = path.join(mkdtempSync(path.join(os.tmpdir(), 'mcp-identity-')), 'retail.sqlite');
const RUN_SECRET = 'mcp-identity-run-secret-0123456789';
const IVAN = { email: 'ivan.santos3158@example.com', user_id: 'ivan_santos_6635', order: '#W8770097' };

let shop: { url: string; child: ChildProcess } | undefined;
let other: McpHttpServer | undefined;
/** The `_meta` of each call the third-party server received. */
const otherMetas: Array<Record<string, unknown>> = [];
let withSecret: TemporalEnv | undefined;

/** This project's retail server over HTTP, with effects, sharing the secret with one of the workers. */
async function startShop(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [MCP_MAIN, '--domain', 'retail', '--http', '0', '--effects'], {
    env: { ...process.env, AGENT_MCP_RUN_SECRET: RUN_SECRET, AGENT_RETAIL_DB: RETAIL_DB },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
      const found = /at (http:\/\/\S+)/.exec(log);
      if (found) resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`mcp server exited ${code}: ${log}`)));
  });
  return { url, child };
}

const fixture = agentFixture({
  queue: 'mcp-identity',
  workerEnv: { AGENT_MCP_URLS: 'http://127.0.0.1:' },
  prepare: async () => {
    shop = await startShop();
    other = await serveHttp(() => {
      const server = new Server({ name: 'third-party', version: '0.0.1' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [{ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } }],
      }));
      server.setRequestHandler(CallToolRequestSchema, (req): CallToolResult => {
        otherMetas.push({ ...req.params._meta });
        return { content: [{ type: 'text', text: '"ok"' }] };
      });
      return server;
    }, 0);
  },
  setup: (f) => {
    withSecret = f.queue('mcp-identity-secret');
    f.startWorker({ AGENT_MCP_URLS: 'http://127.0.0.1:', AGENT_MCP_RUN_SECRET: RUN_SECRET }, withSecret);
  },
});
after(async () => {
  shop?.child.kill('SIGKILL');
  await other?.close();
});

const SHOP_TOOLS = {
  find_user_id_by_email: { allowed: true, authenticates: true },
  get_order_details: { allowed: true },
  get_user_details: { allowed: true },
};

function config(otherIdentity: boolean): McpConfig {
  return {
    servers: {
      shop: { url: shop!.url, run_identity: true, tools: SHOP_TOOLS },
      h: { url: other!.url, ...(otherIdentity ? { run_identity: true } : {}), tools: { echo: { allowed: true } } },
    },
  };
}

function retailInput(mcp: McpConfig): Partial<AgentInput> {
  return { domain: 'retail', goal: 'Show my order', principal: undefined, allow: [], mcp };
}

/** Ivan authenticates with the shop, the third-party server is called, and his order is read. */
const IVAN_RUN = [
  tool('shop.find_user_id_by_email', { email: IVAN.email }),
  tool('h.echo', {}),
  tool('shop.get_order_details', { order_id: IVAN.order }),
  final('Your order is pending.'),
];

async function freshSession(): Promise<Client> {
  const client = new Client({ name: 'attacker', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(shop!.url)));
  return client;
}

const textOf = (result: CallToolResult): string =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe("a run's identity on MCP servers", { concurrency: 1 }, () => {
  it('goes only to a server that opts in (run_identity): the third-party server gets none of it', async () => {
    otherMetas.length = 0;
    const { result } = await fixture.run(IVAN_RUN, retailInput(config(false)), { on: withSecret! });
    assert.equal(result.stop_reason, 'success', JSON.stringify(result.trace));
    assert.equal(result.history[2]!.observation.ok, true, JSON.stringify(result.history[2]));
    assert.equal(otherMetas.length, 1);
    for (const key of ['run_key', 'run_chain', 'run_proof', 'principal'])
      assert.equal(otherMetas[0]![key], undefined, `${key} sent to the third-party server`);
  });

  it('a proof an (opted-in) server captured is refused by a fresh session on any other request', async () => {
    otherMetas.length = 0;
    const { result } = await fixture.run(IVAN_RUN, retailInput(config(true)), { on: withSecret! });
    assert.equal(result.stop_reason, 'success', JSON.stringify(result.trace));
    const stolen = otherMetas[0]!;
    assert.equal(typeof stolen.run_proof, 'string', 'the opted-in server got the proof');
    const { principal: _named, ...unnamed } = stolen;
    const thief = await freshSession();
    try {
      const read = (await thief.callTool({
        name: 'get_order_details',
        arguments: { order_id: IVAN.order },
        _meta: unnamed,
      })) as CallToolResult;
      assert.match(textOf(read), /^policy_denied:not_authenticated/);
      const user = (await thief.callTool({
        name: 'get_user_details',
        arguments: { user_id: IVAN.user_id },
        _meta: stolen,
      })) as CallToolResult;
      assert.equal(user.isError, true);
      assert.match(textOf(user), /^invalid_principal: /);
      const cancel = (await thief.callTool({
        name: 'cancel_pending_order',
        arguments: { order_id: IVAN.order, reason: 'no longer needed' },
        _meta: { ...stolen, idempotency_key: 'attacker-1' },
      })) as CallToolResult;
      assert.equal(cancel.isError, true);
      assert.match(textOf(cancel), /^invalid_principal: /);
    } finally {
      await thief.close();
    }
  });

  it('without the secret, a run after another on the same worker is refused its customer', async () => {
    const mcp: McpConfig = { servers: { shop: { url: shop!.url, run_identity: true, tools: SHOP_TOOLS } } };
    const a = await fixture.run(
      [
        tool('shop.find_user_id_by_email', { email: IVAN.email }),
        tool('shop.get_order_details', { order_id: IVAN.order }),
        final('Your order is pending.'),
      ],
      retailInput(mcp),
    );
    assert.equal(a.result.stop_reason, 'success', JSON.stringify(a.result.trace));
    assert.equal(a.result.history[1]!.observation.ok, true, 'run A reads as Ivan without the secret');
    const b = await fixture.run(
      [tool('shop.get_user_details', { user_id: IVAN.user_id }), final('I cannot tell.')],
      retailInput(mcp),
    );
    const observation = b.result.history[0]!.observation;
    assert.equal(observation.ok, false, JSON.stringify(observation.data));
    assert.match(JSON.stringify(observation.data), /not_authenticated/);
  });
});
