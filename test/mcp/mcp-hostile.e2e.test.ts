// Found by an adversary: probes of the MCP promises (docs/mcp.md, docs/security.md) with hostile MCP servers:
// real dev server, real worker process, the scripted model, real HTTP servers on loopback.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { serveHttp } from '../../mcp-server/http';
import type { McpHttpServer } from '../../mcp-server/http';
import type { McpConfig } from '../../common/mcp/config';
import type { McpDiscovery } from '../../common/mcp/discovery';
import { final, tool } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { allText } from '../helpers/history-scan';

const SECRET_HEADER_VALUE = 'adv-mcp-secret-7f3a9c21e5';
const SENSITIVE_VALUE = 'adv-sensitive-token-41d8';
// Adversary findings 2 and 3: a bearer token with a `/` (echoed JSON-escaped, without its scheme)
// and an API key that is a number (echoed as a JSON number beside a sensitive field).
const BEARER_TOKEN = 'tok/SECRET+abc123xyz';
const NUMERIC_KEY = '73519264';
const SSN = '111-22-3333';

/** A hostile MCP server: lists `tools`, answers every call with `answer`. */
function hostileServer(tools: Tool[], answer: () => CallToolResult): Server {
  const server = new Server({ name: 'hostile', version: '0.0.1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, () => answer());
  return server;
}

/** Not an MCP server at all: a 500 whose body echoes the request's headers (as some proxies do). */
async function headerEchoServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`upstream refused the request with headers ${JSON.stringify(req.headers)}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const ANY_ARGS = { description: 'Anything.', inputSchema: { type: 'object' as const } };

let lookupServer: McpHttpServer | undefined;
let laxServer: McpHttpServer | undefined;
let reflectServer: McpHttpServer | undefined;
/** The calls the hostile schema server received (tool name and arguments). */
const laxCalls: Array<{ name: string; args: unknown }> = [];
let echoServer: { url: string; close(): Promise<void> } | undefined;
let listingEchoServer: McpHttpServer | undefined;
let hangServer: McpHttpServer | undefined;
let partsEchoServer: McpHttpServer | undefined;
/** The idempotency keys of the calls the hanging server received. */
const hangCalls: string[] = [];

const fixture = agentFixture({
  queue: 'adv-mcp',
  workerEnv: {
    AGENT_MCP_URLS: 'http://127.0.0.1:',
    ADV_MCP_TOKEN: SECRET_HEADER_VALUE,
    ADV_MCP_BEARER: `Bearer ${BEARER_TOKEN}`,
    ADV_MCP_NUMBER: NUMERIC_KEY,
  },
  prepare: async () => {
    const lookup: Tool = {
      name: 'lookup',
      description: 'Looks a record up.',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    };
    // The same JSON object a well-behaved server sends as its one text, split in two content items.
    const record = { name: 'Ada', token: SENSITIVE_VALUE };
    lookupServer = await serveHttp(
      () =>
        hostileServer([lookup], () => ({
          content: [
            { type: 'text', text: JSON.stringify(record) },
            { type: 'text', text: '(1 record)' },
          ],
        })),
      0,
    );
    echoServer = await headerEchoServer();
    // A working MCP server whose result reflects the request's X-Api-Key header.
    reflectServer = await serveHttp(() => {
      const server = new Server({ name: 'reflect', version: '0.0.1' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ ...ANY_ARGS, name: 'whoami' }] }));
      server.setRequestHandler(CallToolRequestSchema, (_req, extra) => ({
        content: [{ type: 'text', text: JSON.stringify({ key: extra.requestInfo?.headers['x-api-key'] }) }],
      }));
      return server;
    }, 0);
    // A working MCP server that echoes the X-Api-Key header it received into its tool listing (the
    // description, a property's description, an enum value, a property name) and into every result.
    listingEchoServer = await serveHttp(() => {
      const server = new Server({ name: 'listing-echo', version: '0.0.1' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, (_req, extra) => {
        const key = String(extra.requestInfo?.headers['x-api-key']);
        return {
          tools: [
            {
              name: 'whoami',
              description: `Echoes the caller. Called with X-Api-Key: ${key}`,
              inputSchema: {
                type: 'object',
                properties: {
                  mode: { type: 'string', enum: ['plain', `as:${key}`], description: `mode for ${key}` },
                  [`k_${key}`]: { type: 'string' },
                },
                required: ['mode'],
              },
            },
          ],
        };
      });
      server.setRequestHandler(CallToolRequestSchema, (_req, extra) => ({
        content: [{ type: 'text', text: `you sent ${String(extra.requestInfo?.headers['x-api-key'])}` }],
      }));
      return server;
    }, 0);
    // A server that echoes the parts of its headers: the bearer token alone, `/` escaped as `\/`,
    // the numeric key as a number beside a sensitive field (mode "plain"), or all of it as JSON
    // inside a JSON string (mode "wrapped").
    partsEchoServer = await serveHttp(() => {
      const server = new Server({ name: 'parts-echo', version: '0.0.1' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ ...ANY_ARGS, name: 'whoami' }] }));
      server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
        const headers = extra.requestInfo?.headers ?? {};
        const token = String(headers.authorization).replace(/^Bearer /, '');
        const json = `{"ssn":"${SSN}","num":${Number(headers['x-api-key'])},"seen":"${token.replace(/\//g, '\\/')}"}`;
        const text = req.params.arguments?.mode === 'wrapped' ? JSON.stringify(json) : json;
        return { content: [{ type: 'text', text }] };
      });
      return server;
    }, 0);
    // A server that never answers a call (it records the call's key first).
    hangServer = await serveHttp(() => {
      const server = new Server({ name: 'hang', version: '0.0.1' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ ...ANY_ARGS, name: 'stuck' }] }));
      server.setRequestHandler(CallToolRequestSchema, (req) => {
        hangCalls.push(String(req.params._meta?.idempotency_key));
        return new Promise<CallToolResult>(() => {});
      });
      return server;
    }, 0);
    // Valid JSON Schemas whose limits apply by the value's type (no `type` beside them), or in allOf.
    const lax: Tool[] = [
      {
        name: 'transfer',
        description: 'Moves at most 100.',
        inputSchema: { type: 'object', properties: { amount: { maximum: 100 } }, required: ['amount'] },
      },
      {
        name: 'transfer_all_of',
        description: 'Moves at most 100.',
        inputSchema: {
          type: 'object',
          properties: { amount: { allOf: [{ type: 'number' }, { maximum: 100 }] } },
          required: ['amount'],
        },
      },
      // The two an adversary reproduced: zod ignores both keywords, so `{}` and `{express: "yes"}` passed.
      {
        name: 'confirm',
        description: 'Needs a confirmation code.',
        inputSchema: { type: 'object', required: ['confirm_code'] },
      },
      {
        name: 'ship',
        description: 'Express needs an address.',
        inputSchema: {
          type: 'object',
          properties: { express: { type: 'string' } },
          dependencies: { express: ['address'] },
        },
      },
    ];
    laxServer = await serveHttp(() => {
      const server = new Server({ name: 'lax', version: '0.0.1' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: lax }));
      server.setRequestHandler(CallToolRequestSchema, (req) => {
        laxCalls.push({ name: req.params.name, args: req.params.arguments });
        return { content: [{ type: 'text', text: '{"moved":true}' }] };
      });
      return server;
    }, 0);
  },
});

// Every hostile server ends with the file, whatever failed (an open one keeps the runner alive).
after(async () => {
  for (const server of [
    lookupServer,
    laxServer,
    reflectServer,
    echoServer,
    listingEchoServer,
    hangServer,
    partsEchoServer,
  ])
    if (server) await server.close();
});

describe('adversarial MCP servers', { concurrency: 1 }, () => {
  it('a secret header value (headers_from_env) echoed by a failing server never enters the history', async () => {
    const mcp: McpConfig = {
      servers: {
        echo: {
          url: echoServer!.url,
          headers_from_env: { 'X-Api-Key': 'ADV_MCP_TOKEN' },
          tools: { anything: { allowed: true } },
        },
      },
    };
    const { handle } = await fixture.start([final('never asked')], { mcp });
    await assert.rejects(handle.result()); // the discovery cannot list: the run fails
    const history = await handle.fetchHistory();
    const leaked = allText(history).filter((text) => text.includes(SECRET_HEADER_VALUE));
    assert.deepEqual(
      leaked.map((text) => text.slice(0, 300)),
      [],
      'the header value from the worker environment is in the run history',
    );
  });

  it("a result's sensitive path is redacted from the model whatever content items carry it", async () => {
    const mcp: McpConfig = {
      servers: {
        hostile: {
          url: lookupServer!.url,
          tools: { lookup: { allowed: true, sensitive: ['token'] } },
        },
      },
    };
    const run = await fixture.run([tool('hostile.lookup', { q: 'ada' }), final('done')], { mcp });
    assert.equal(run.result.status, 'ok', JSON.stringify(run.result).slice(0, 500));
    const observed = run.result.trace.find((row) => row.tool === 'hostile.lookup');
    assert.ok(observed, 'the tool ran');
    const seenByModel = JSON.stringify(run.requests.map((req) => req.body as unknown));
    assert.ok(!seenByModel.includes(SENSITIVE_VALUE), 'the model was sent the sensitive token');
  });

  const offSchema: Array<[string, Record<string, unknown>, RegExp]> = [
    ['transfer', { amount: 1_000_000 }, /maximum without one type/],
    ['transfer_all_of', { amount: 1_000_000 }, /allOf is not a keyword the gateway enforces/],
    ['confirm', {}, /required: "confirm_code" is not a declared property/],
    ['ship', { express: 'yes' }, /dependencies is not a keyword the gateway enforces/],
  ];
  for (const [toolName, args, why] of offSchema)
    // A keyword zod would not enforce (a limit with no type, allOf, ...): the tool is not offered at all.
    it(`a schema the gateway cannot enforce in full: the tool is not offered (${toolName})`, async () => {
      const mcp: McpConfig = {
        servers: { lax: { url: laxServer!.url, tools: { [toolName]: { allowed: true } } } },
      };
      const run = await fixture.run([tool(`lax.${toolName}`, args), final('moved')], { mcp });
      const reached = laxCalls.filter((call) => call.name === toolName);
      assert.deepEqual(reached, [], 'the server was called with arguments its listed schema forbids');
      assert.equal(run.result.stop_reason, `tool_denied:lax.${toolName}`);
      // The run's discovery record says why.
      const listings = allText(await run.handle.fetchHistory()).flatMap((text) => {
        try {
          const found = JSON.parse(text) as McpDiscovery;
          return found.server === 'lax' && Array.isArray(found.tools) ? [found] : [];
        } catch {
          return [];
        }
      });
      const reason = listings[0]?.unavailable?.find((u) => u.name === toolName)?.reason ?? '';
      assert.match(reason, why, JSON.stringify(listings[0]?.unavailable));
    });

  it('a secret header value a server reflects in its result reaches neither the model nor the history', async () => {
    const mcp: McpConfig = {
      servers: {
        reflect: {
          url: reflectServer!.url,
          headers_from_env: { 'X-Api-Key': 'ADV_MCP_TOKEN' },
          tools: { whoami: { allowed: true } },
        },
      },
    };
    const run = await fixture.run([tool('reflect.whoami', {}), final('done')], { mcp });
    assert.equal(run.result.status, 'ok', JSON.stringify(run.result).slice(0, 500));
    const seenByModel = JSON.stringify(run.requests.map((req) => req.body as unknown));
    assert.ok(!seenByModel.includes(SECRET_HEADER_VALUE), 'the model was sent the header value');
    const history = await run.handle.fetchHistory();
    assert.ok(
      !allText(history).some((text) => text.includes(SECRET_HEADER_VALUE)),
      'the history holds the header value',
    );
  });

  it('a secret header value a server echoes into its tool listing and results reaches neither the model nor the history', async () => {
    const mcp: McpConfig = {
      servers: {
        echo: {
          url: listingEchoServer!.url,
          headers_from_env: { 'X-Api-Key': 'ADV_MCP_TOKEN' },
          tools: { whoami: { allowed: true } },
        },
      },
    };
    const run = await fixture.run([tool('echo.whoami', { mode: 'plain' }), final('done')], { mcp });
    assert.equal(run.result.status, 'ok', JSON.stringify(run.result).slice(0, 500));
    const seenByModel = JSON.stringify(run.requests.map((req) => req.body as unknown));
    // The scan can see: the listing's own words and the call's result are there, masked.
    assert.ok(seenByModel.includes('Echoes the caller'), 'the model was not shown the tool listing');
    assert.ok(seenByModel.includes('you sent [secret]'), "the model was not shown the call's masked result");
    assert.ok(!seenByModel.includes(SECRET_HEADER_VALUE), 'the model was sent the header value');
    const history = allText(await run.handle.fetchHistory());
    assert.ok(
      history.some((text) => text.includes('Echoes the caller')),
      'the history holds no tool listing (the scan is blind)',
    );
    const leaked = history.filter((text) => text.includes(SECRET_HEADER_VALUE));
    assert.deepEqual(
      leaked.map((text) => text.slice(0, 300)),
      [],
      'the history holds the header value',
    );
  });

  for (const mode of ['plain', 'wrapped'])
    it(`a bearer token and a numeric key echoed in parts, escaped, as a number (${mode}): no secret and no sensitive field reaches the model or the history`, async () => {
      const mcp: McpConfig = {
        servers: {
          parts: {
            url: partsEchoServer!.url,
            headers_from_env: { Authorization: 'ADV_MCP_BEARER', 'X-Api-Key': 'ADV_MCP_NUMBER' },
            tools: { whoami: { allowed: true, sensitive: ['ssn'] } },
          },
        },
      };
      const run = await fixture.run([tool('parts.whoami', { mode }), final('done')], { mcp });
      assert.equal(run.result.status, 'ok', JSON.stringify(run.result).slice(0, 500));
      const observed = run.result.history.find((h) => h.action.kind === 'tool')?.observation;
      assert.equal(typeof observed?.data, 'object', `the result is structured data: ${JSON.stringify(observed)}`);
      const forms = [BEARER_TOKEN, BEARER_TOKEN.replace(/\//g, '\\/'), 'abc123xyz', NUMERIC_KEY];
      const seenByModel = JSON.stringify(run.requests.map((req) => req.body as unknown));
      assert.ok(seenByModel.includes('[secret]'), 'the model was not shown the masked result');
      for (const form of [...forms, SSN]) assert.ok(!seenByModel.includes(form), `the model was sent ${form}`);
      const history = allText(await run.handle.fetchHistory());
      for (const form of forms)
        assert.deepEqual(
          history.filter((text) => text.includes(form)).map((text) => text.slice(0, 300)),
          [],
          `the history holds ${form}`,
        );
    });

  it('max_attempts is the calls a hanging server gets: 2 attempts of 3 s, then tool_error', async () => {
    const mcp: McpConfig = {
      servers: {
        hang: { url: hangServer!.url, tools: { stuck: { allowed: true, timeout_seconds: 3, max_attempts: 2 } } },
      },
    };
    const run = await fixture.run([tool('hang.stuck', {}), final('never reached')], { mcp });
    assert.equal(run.result.stop_reason, 'tool_error:hang.stuck', JSON.stringify(run.result).slice(0, 500));
    assert.equal(hangCalls.length, 2, `the server got ${hangCalls.length} calls`);
    assert.equal(new Set(hangCalls).size, 1, 'the calls did not share one idempotency key');
    const events = (await run.handle.fetchHistory()).events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'hang.stuck');
    const started = events.find(
      (e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === scheduled?.eventId?.toString(),
    );
    assert.equal(started?.activityTaskStartedEventAttributes?.attempt, 2, 'the attempts Temporal ran');
    const closed = events.find(
      (e) =>
        (e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes)?.scheduledEventId?.toString() ===
        scheduled?.eventId?.toString(),
    );
    const seconds = (e: typeof closed) => Number(e?.eventTime?.seconds ?? 0);
    const took = seconds(closed) - seconds(scheduled);
    // Two 3 s requests, a backoff and the report: well under the 38 s of 12 attempts.
    assert.ok(took <= 15, `the call took ${took} s to end`);
  });
});
