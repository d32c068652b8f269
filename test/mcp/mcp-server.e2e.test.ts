// The project's domains served over MCP (`npm run mcp`), driven by the official SDK's client over
// stdio and over streamable HTTP, as a real server process: the tools listed with the catalog's
// JSON Schemas, a read, calls the server refuses (arguments off the schema, another principal, a
// write before authentication), a domain error as an error result, a write applied once per
// idempotency key, and the lookups by key and by owner.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { catalogEntryOf } from '../../common/tools/index';
import { supportDomain } from '../../domains/support/index';
import { countAppliedWrites } from '../../domains/retail/backend/open';
import { DIST } from '../helpers/harness';
import { withRunMeta } from '../../activities/mcp/run-proof';

const MAIN = path.join(DIST, 'mcp-server', 'main.js');
const RETAIL_DB = path.join(mkdtempSync(path.join(os.tmpdir(), 'mcp-retail-')), 'retail.sqlite');
const REFUNDS_DB = path.join(path.dirname(RETAIL_DB), 'refunds.sqlite');
const ENV = { ...process.env, AGENT_RETAIL_DB: RETAIL_DB, AGENT_REFUNDS_DB: REFUNDS_DB } as Record<string, string>;

const RUN_SECRET = 'test-run-secret-0123456789';

const IVAN = { email: 'ivan.santos3158@example.com', user_id: 'ivan_santos_6635', order: '#W8770097' };
const ANYA_ORDER = '#W6436609';

async function call(client: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) {
  return (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;
}
const textOf = (result: CallToolResult): string =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('support over stdio', () => {
  let client: Client;
  before(async () => {
    client = new Client({ name: 'test', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, '--domain', 'support', '--principal', '42'],
        env: ENV,
      }),
    );
  });
  after(() => client.close());

  it('lists the read-only tools with the JSON Schema the model sees', async () => {
    const { tools } = await client.listTools();
    const readOnly = supportDomain.tools.filter((t) => !t.needsApproval);
    assert.deepEqual(tools.map((t) => t.name).sort(), readOnly.map((t) => t.name).sort());
    for (const tool of readOnly) {
      const listed = tools.find((t) => t.name === tool.name)!;
      assert.equal(listed.description, tool.description);
      assert.deepEqual(listed.inputSchema, catalogEntryOf(tool).args);
      assert.equal(listed.annotations?.readOnlyHint, true);
    }
  });

  it('runs a read for the principal', async () => {
    const result = await call(client, 'get_user_billing', { user_id: 42 });
    assert.equal(result.isError, undefined, textOf(result));
    assert.equal((JSON.parse(textOf(result)) as { billing: { plan: string } }).billing.plan, 'pro_monthly');
    assert.equal((result.structuredContent as { source: string }).source, 'billing-service');
  });

  it('refuses arguments off the schema and a call about another user', async () => {
    const bad = await call(client, 'get_user_billing', { user_id: '42' });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /^tool_bad_args:get_user_billing: user_id: /);
    const other = await call(client, 'get_user_profile', { user_id: 7 });
    assert.equal(other.isError, true);
    assert.match(textOf(other), /^policy_denied:other_user/);
    const missing = await call(client, 'issue_refund', { user_id: 42, amount_usd: 1, reason: 'x' });
    assert.match(
      textOf(missing),
      /^tool_missing:issue_refund/,
      'an approval-gated tool is not served without --effects',
    );
  });

  it("accepts the operator's principal repeated in _meta", async () => {
    const result = await call(client, 'get_user_billing', { user_id: 42 }, { principal: '42' });
    assert.equal(result.isError, undefined, textOf(result));
  });

  it("refuses a principal in _meta other than the operator's --principal (adversary finding 1)", async () => {
    for (const principal of ['7', '99', 'root']) {
      const other = await call(client, 'get_user_billing', { user_id: Number(principal) || 7 }, { principal });
      assert.equal(other.isError, true);
      assert.match(textOf(other), /^invalid_principal: /);
    }
  });
});

describe('support over stdio without --principal', () => {
  let client: Client;
  before(async () => {
    client = new Client({ name: 'test', version: '1' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [MAIN, '--domain', 'support'], env: ENV }),
    );
  });
  after(() => client.close());

  it('reports a domain error as an error result (the principal named in _meta)', async () => {
    const result = await call(client, 'get_user_billing', { user_id: 99 }, { principal: '99' });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /billing record for user 99 not found/);
    const invalid = await call(client, 'get_user_billing', { user_id: 99 }, { principal: 'root' });
    assert.match(textOf(invalid), /^invalid_principal: /);
  });
});

describe('retail over streamable HTTP', () => {
  let server: ChildProcess;
  let url: URL;
  let sessionKey: string | undefined;
  before(async () => {
    server = spawn(process.execPath, [MAIN, '--domain', 'retail', '--http', '0', '--effects'], {
      env: { ...ENV, AGENT_MCP_RUN_SECRET: RUN_SECRET },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    url = await new Promise<URL>((resolve, reject) => {
      let seen = '';
      server.stderr!.on('data', (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        const found = /at (http:\/\/\S+)/.exec(seen);
        if (found) resolve(new URL(found[1]!));
      });
      server.once('exit', (code) => reject(new Error(`mcp server exited ${code}: ${seen}`)));
    });
  });
  after(() => void server.kill('SIGTERM'));

  async function session(): Promise<Client> {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url));
    return client;
  }

  it('authenticates, reads, refuses what the session may not do, and writes once per key', async () => {
    const client = await session();
    try {
      const early = await call(client, 'cancel_pending_order', { order_id: IVAN.order, reason: 'no longer needed' });
      assert.match(textOf(early), /^policy_denied:not_authenticated/);
      const found = await call(client, 'find_user_id_by_email', { email: IVAN.email });
      assert.equal(JSON.parse(textOf(found)), IVAN.user_id);
      const notFound = await call(client, 'get_order_details', { order_id: '#W0000000' });
      assert.equal(notFound.isError, true);
      assert.match(textOf(notFound), /Order not found/);
      // Whose an order is (`_meta.owner`): only whether it is the session's principal's.
      const owner = async (order_id: string) =>
        (await call(client, 'cancel_pending_order', { order_id, reason: 'asking' }, { owner: 'lookup' }))
          .structuredContent;
      assert.deepEqual(await owner(IVAN.order), { owner: 'principal' });
      assert.deepEqual(await owner(ANYA_ORDER), { owner: 'other' });
      assert.deepEqual(await owner('#W0000000'), { owner: null });
      const theirs = await call(client, 'cancel_pending_order', { order_id: ANYA_ORDER, reason: 'no longer needed' });
      assert.match(textOf(theirs), /^policy_denied:other_user/);

      // The session's own database (its key is the MCP session id); the same key twice writes once.
      const meta = { idempotency_key: `cancel-${Date.now()}` };
      const cancel = { order_id: IVAN.order, reason: 'no longer needed' };
      // A lookup or key that is no string runs nothing (found by a newcomer: `reconcile: true` ran the write).
      for (const bad of [
        { reconcile: true },
        { reconcile: 1 },
        { owner: true },
        { idempotency_key: 5 },
        { reconcile: '' },
      ]) {
        const refusedCall = await call(client, 'cancel_pending_order', cancel, { ...meta, ...bad });
        assert.match(textOf(refusedCall), /^invalid_meta: _meta\.\w+ must be a non-empty string; nothing was run/);
      }
      const first = await call(client, 'cancel_pending_order', cancel, meta);
      assert.equal(first.isError, undefined, textOf(first));
      const again = await call(client, 'cancel_pending_order', cancel, meta);
      assert.deepEqual(again.structuredContent, first.structuredContent, 'the same key reports the first outcome');
      // A lookup by key (`_meta.reconcile`) runs nothing: it reports the key's outcome, and settles
      // a key nobody recorded as not made, so a call still on its way with it cannot apply it later.
      const looked = await call(client, 'cancel_pending_order', cancel, { ...meta, reconcile: 'settle' });
      assert.deepEqual(looked.structuredContent, { state: 'confirmed' });
      const unmade = { idempotency_key: `never-${Date.now()}` };
      const settled = await call(client, 'cancel_pending_order', cancel, { ...unmade, reconcile: 'settle' });
      assert.deepEqual(settled.structuredContent, { state: 'not_made' });
      const late = await call(client, 'cancel_pending_order', cancel, unmade);
      assert.equal(late.isError, true, textOf(late));
      assert.match(textOf(late), /settled_not_made/);
      sessionKey = (client.transport as StreamableHTTPClientTransport).sessionId!;
      assert.equal(await countAppliedWrites(RETAIL_DB, sessionKey), 1);
    } finally {
      await client.close();
    }
  });

  it("keeps each session in its own database, and `_meta` run_key names another's", async () => {
    assert.ok(sessionKey, 'the first session wrote');
    const client = await session();
    try {
      // An order names its owner: this session authenticates before it reads one.
      const before = await call(client, 'get_order_details', { order_id: IVAN.order });
      assert.match(textOf(before), /^policy_denied:not_authenticated/);
      await call(client, 'find_user_id_by_email', { email: IVAN.email });
      const status = async (meta?: Record<string, unknown>) =>
        (
          JSON.parse(textOf(await call(client, 'get_order_details', { order_id: IVAN.order }, meta))) as {
            status: string;
          }
        ).status;
      assert.equal(await status(), 'pending');
      assert.equal(await status({ run_key: sessionKey }), 'cancelled');
    } finally {
      await client.close();
    }
  });

  // Adversary finding 1: the authenticated customer was kept under the run key the caller named.
  describe("a run's authentication (AGENT_MCP_RUN_SECRET)", () => {
    const runKey = `agent-conv-${Date.now()}`;
    const chain = 'chain-run-1';
    /** The `_meta` the worker sends for this request of the run (proven with `secret`). */
    const proven = (
      name: string,
      args: Record<string, unknown>,
      run: { chain: string; principal?: string; extra?: Record<string, string> },
      secret = RUN_SECRET,
    ) =>
      withRunMeta(
        { name, arguments: args },
        run.extra ?? {},
        { runKey, chain: run.chain, principal: run.principal },
        { AGENT_MCP_RUN_SECRET: secret },
      );
    const READ = { order_id: IVAN.order };
    const CANCEL = { order_id: IVAN.order, reason: 'no longer needed' };
    const orderStatus = async (client: Client, meta: Record<string, unknown>) => {
      const result = await call(client, 'get_order_details', READ, meta);
      return result.isError ? textOf(result) : (JSON.parse(textOf(result)) as { status: string }).status;
    };

    it('is kept for the proven run across sessions (a worker restart opens a new one)', async () => {
      const first = await session();
      const email = { email: IVAN.email };
      try {
        const found = await call(
          first,
          'find_user_id_by_email',
          email,
          proven('find_user_id_by_email', email, { chain }),
        );
        assert.equal(JSON.parse(textOf(found)), IVAN.user_id);
        assert.equal(await orderStatus(first, proven('get_order_details', READ, { chain })), 'pending');
      } finally {
        await first.close();
      }
      const second = await session();
      try {
        const run = { chain, principal: IVAN.user_id };
        assert.equal(await orderStatus(second, proven('get_order_details', READ, run)), 'pending');
        const extra = { idempotency_key: `run-cancel-${Date.now()}` };
        const cancel = await call(
          second,
          'cancel_pending_order',
          CANCEL,
          proven('cancel_pending_order', CANCEL, { ...run, extra }),
        );
        assert.equal(cancel.isError, undefined, textOf(cancel));
      } finally {
        await second.close();
      }
    });

    it('is refused to another session naming the run key without its proof', async () => {
      const thief = await session();
      try {
        for (const meta of [
          { run_key: runKey },
          { run_key: runKey, run_chain: chain },
          { run_key: runKey, run_chain: chain, run_proof: 'f'.repeat(64) },
          proven('get_order_details', READ, { chain }, 'a-guessed-secret'),
        ]) {
          assert.match(await orderStatus(thief, meta), /^policy_denied:not_authenticated/, JSON.stringify(meta));
          const named = await orderStatus(thief, { ...meta, principal: IVAN.user_id });
          assert.match(named, /^invalid_principal: /, JSON.stringify(meta));
          const cancel = await call(thief, 'cancel_pending_order', CANCEL, {
            ...meta,
            idempotency_key: `thief-${Date.now()}`,
          });
          assert.equal(cancel.isError, true);
        }
      } finally {
        await thief.close();
      }
    });

    // Second adversary, finding 1a: a proof captured from one request served as a bearer token.
    it('refuses a captured proof on any request but the one it proves', async () => {
      const thief = await session();
      try {
        const run = { chain, principal: IVAN.user_id };
        const read = proven('get_order_details', READ, run);
        // Another tool, other arguments, another principal, an idempotency key added: not proven.
        const user = await call(thief, 'get_user_details', { user_id: IVAN.user_id }, read);
        assert.match(textOf(user), /^invalid_principal: /);
        const { principal: _p, ...unnamed } = read;
        const details = await call(thief, 'get_user_details', { user_id: IVAN.user_id }, unnamed);
        assert.match(textOf(details), /^policy_denied:not_authenticated/);
        const other = await call(thief, 'get_order_details', { order_id: ANYA_ORDER }, unnamed);
        assert.match(textOf(other), /^policy_denied:not_authenticated/);
        const key = `replay-${Date.now()}`;
        const cancel = await call(thief, 'cancel_pending_order', CANCEL, { ...read, idempotency_key: key });
        assert.match(textOf(cancel), /^invalid_principal: /);
        // The owner lookup before the customer's consent, replayed as the call itself: not proven.
        const lookup = proven('cancel_pending_order', CANCEL, {
          ...run,
          extra: { idempotency_key: key, owner: 'lookup' },
        });
        const owner = await call(thief, 'cancel_pending_order', CANCEL, lookup);
        assert.deepEqual(owner.structuredContent, { owner: 'principal' }, textOf(owner));
        const { owner: _o, ...asCall } = lookup;
        const write = await call(thief, 'cancel_pending_order', CANCEL, asCall);
        assert.equal(write.isError, true);
        assert.match(textOf(write), /^invalid_principal: /);
      } finally {
        await thief.close();
      }
    });

    it('is not inherited by a new run under the same workflow id', async () => {
      const next = await session();
      try {
        assert.match(
          await orderStatus(next, proven('get_order_details', READ, { chain: 'chain-run-2' })),
          /^policy_denied:not_authenticated/,
        );
        const named = proven('get_order_details', READ, { chain: 'chain-run-2', principal: IVAN.user_id });
        assert.match(await orderStatus(next, named), /^invalid_principal: /);
      } finally {
        await next.close();
      }
    });
  });
});
