// Runs that use MCP servers' tools, end to end: a real dev server, a real worker process, the
// scripted model, this project's own MCP server (a separate process, over stdio and streamable
// HTTP) and a third-party server from npm (the reference filesystem server). Discovery is recorded
// once; the config decides what may be called; arguments are checked against the recorded JSON
// Schema; a server killed mid-call is retried; a server that lists new tools mid-run does not widen
// the run; a cancel reaches the in-flight MCP request.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { temporal } from '@temporalio/proto';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { AGENT_STOP_REASON } from '../../common/temporal/search-attributes';
import { OBSERVATION_MAX_BYTES } from '../../activities/tools/envelope';
import { runResult } from '../../client/agent-client';
import type { McpConfig, McpToolConfig } from '../../common/mcp/config';
import type { AgentInput } from '../../common/types';
import { final, tool } from '../../offline-model/scripted-replies';
import { answerApproval, pendingApproval } from '../../client/approvals';
import { countAppliedWrites } from '../../domains/retail/backend/open';
import { agentFixture } from '../helpers/agent-fixture';
import { DIST, eventually, REPO_ROOT } from '../helpers/harness';
import { requestView } from '../../offline-model/request-view';

const MCP_MAIN = path.join(DIST, 'mcp-server', 'main.js');
const FS_MAIN = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const FOLDER = mkdtempSync(path.join(os.tmpdir(), 'mcp-fs-'));
writeFileSync(path.join(FOLDER, 'note.txt'), 'refunds within 14 days\n');

// What this worker may spawn and call: node (this project's and the filesystem server) and loopback.
// The secret the worker proves its runs with to this project's MCP server (activities/mcp/run-proof.ts).
const RUN_SECRET = { AGENT_MCP_RUN_SECRET: 'mcp-runs-run-secret-0123456789' };
const WORKER_MCP_ENV = { AGENT_MCP_COMMANDS: process.execPath, AGENT_MCP_URLS: 'http://127.0.0.1:', ...RUN_SECRET };
const fixture = agentFixture({ queue: 'mcp', workerEnv: WORKER_MCP_ENV });

const BILLING_RULES = {
  get_user_billing: { allowed: true, principal_arg: 'user_id', sensitive: ['billing.price_usd'] },
  get_user_profile: { allowed: false },
  issue_refund: { allowed: true, effectful: true },
};

const stdioSupport = (): McpConfig => ({
  servers: {
    support: {
      command: process.execPath,
      args: [MCP_MAIN, '--domain', 'support'],
      run_identity: true,
      tools: BILLING_RULES,
    },
  },
});

function mcpInput(mcp: McpConfig, extra: Partial<AgentInput> = {}): Partial<AgentInput> {
  return { goal: 'What plan is user 42 on?', principal: '42', allow: [], mcp, ...extra };
}

/** This project's MCP server over HTTP, as a process the test can kill and start again on the same port. */
class HttpMcpServer {
  private child: ChildProcess | undefined;
  log = '';
  port = 0;

  constructor(private readonly domain: string) {}

  async start(args: string[] = [], env: Record<string, string> = {}): Promise<void> {
    const child = spawn(process.execPath, [MCP_MAIN, '--domain', this.domain, '--http', String(this.port), ...args], {
      env: { ...process.env, ...RUN_SECRET, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        this.log += chunk.toString('utf8');
        const found = /at (http:\/\/\S+)/.exec(this.log);
        if (found) resolve(found[1]!);
      });
      child.once('exit', (code) => reject(new Error(`mcp server exited ${code}: ${this.log}`)));
    });
    this.port = Number(new URL(url).port);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.log = '';
  }
}

const http = new HttpMcpServer('support');
const shop = new HttpMcpServer('retail');
const RETAIL_DB = path.join(FOLDER, 'retail.sqlite');
after(() => Promise.all([http.kill(), shop.kill()]));

const httpSupport = (): McpConfig => ({
  servers: { support: { url: http.url, run_identity: true, tools: BILLING_RULES } },
});

async function activityTypes(handle: { fetchHistory(): Promise<temporal.api.history.v1.IHistory> }) {
  const events = (await handle.fetchHistory()).events ?? [];
  return events
    .filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    .map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name!);
}

async function stopReasonAttribute(handle: { describe(): Promise<WorkflowExecutionDescription> }) {
  return eventually('the final search attributes', async () => {
    const value = (await handle.describe()).typedSearchAttributes.get(AGENT_STOP_REASON);
    return value?.startsWith('tool_') ? value : undefined;
  });
}

describe('a run with MCP tools', { concurrency: true }, () => {
  it('calls an allowed tool as the activity <server>.<tool>: discovered once, described to the model, enveloped', async () => {
    const { result, requests, handle } = await fixture.run(
      [tool('support.get_user_billing', { user_id: 42 }), final('User 42 is on pro_monthly at 49 USD.')],
      mcpInput(stdioSupport()),
    );
    assert.equal(result.stop_reason, 'success', JSON.stringify(result.trace));
    const observation = result.history[0]!.observation;
    assert.equal(observation.ok, true);
    assert.equal(observation.source, 'support');
    assert.equal(observation.trust, 'untrusted');
    assert.equal((observation.data as { billing: { plan: string } }).billing.plan, 'pro_monthly');
    assert.deepEqual(await activityTypes(handle), ['mcp_list_tools', 'decide', 'support.get_user_billing', 'decide']);
    // Only what the config allows and the server listed; described with the schema the server listed.
    // (native tool calling: the tool's function name is its name with '.' as '_'; then the runtime's functions)
    const offered = (requests[0]!.body as { tools: Array<{ function: { name: string; parameters: object } }> }).tools;
    assert.deepEqual(
      offered.map((t) => t.function.name),
      ['support_get_user_billing', 'final_answer', 'escalate'],
    );
    assert.equal((offered[0]!.function.parameters as { required: string[] }).required[0], 'user_id');
    // The config's sensitive field: kept in the history, never shown to the model.
    assert.equal((observation.data as { billing: { price_usd: number } }).billing.price_usd, 49);
    const seen = requestView(requests[1]!.body)!.untrusted_observations.steps[0]!.observation as {
      data: { billing: { price_usd: unknown; plan: unknown } };
    };
    assert.equal(seen.data.billing.price_usd, '[redacted]');
    assert.equal(seen.data.billing.plan, 'pro_monthly');
  });

  it('carries the discovery across continue-as-new: the next run of the chain does not list again', async () => {
    const { id, result, handle } = await fixture.run(
      [
        tool('support.get_user_billing', { user_id: 42 }),
        tool('support.get_user_billing', { user_id: 42, extra: 1 }),
        final('pro_monthly'),
      ],
      mcpInput(stdioSupport(), { continue_as_new_every: 1 }),
    );
    // The second call breaks the recorded schema (no extra keys): checked in the next run too.
    assert.equal(result.stop_reason, 'tool_bad_args:support.get_user_billing', JSON.stringify(result.trace));
    const first = fixture.client.workflow.getHandle(id, handle.firstExecutionRunId);
    assert.deepEqual(await activityTypes(first), ['mcp_list_tools', 'decide', 'support.get_user_billing']);
    const latest = fixture.client.workflow.getHandle(id);
    assert.notEqual((await latest.describe()).runId, handle.firstExecutionRunId, 'the run continued as new');
    assert.ok(!(await activityTypes(latest)).includes('mcp_list_tools'), 'no second listing');
  });

  it('denies a tool the config does not allow, or does not name', async () => {
    const profile = await fixture.run([tool('support.get_user_profile', { user_id: 42 })], mcpInput(stdioSupport()));
    assert.equal(profile.result.stop_reason, 'tool_denied:support.get_user_profile');
    const unnamed = await fixture.run([tool('support.search_policy', { query: 'refund' })], mcpInput(stdioSupport()));
    assert.equal(unnamed.result.stop_reason, 'tool_denied:support.search_policy');
    assert.ok(!(await activityTypes(unnamed.handle)).some((t) => t.startsWith('support.')), 'nothing was called');
    // The stop reason's search attribute names a tool the run's servers or config know, never model text.
    assert.equal(await stopReasonAttribute(profile.handle), 'tool_denied:support.get_user_profile');
    assert.equal(await stopReasonAttribute(unnamed.handle), 'tool_denied:support.search_policy');
    const invented = await fixture.run([tool('support.wire_money_now', {})], mcpInput(stdioSupport()));
    assert.equal(invented.result.stop_reason, 'tool_denied:support.wire_money_now');
    assert.equal(await stopReasonAttribute(invented.handle), 'tool_denied:unknown');
  });

  it('ends tool_bad_args on arguments off the recorded JSON Schema, and applies the principal argument', async () => {
    const bad = await fixture.run([tool('support.get_user_billing', { user_id: '42' })], mcpInput(stdioSupport()));
    assert.equal(bad.result.stop_reason, 'tool_bad_args:support.get_user_billing');
    const other = await fixture.run([tool('support.get_user_billing', { user_id: 7 })], mcpInput(stdioSupport()));
    assert.equal(other.result.stop_reason, 'policy_denied:other_user');
  });

  it("refuses to spawn a program the worker's AGENT_MCP_COMMANDS does not list", async () => {
    const rogue: McpConfig = { servers: { sh: { command: '/bin/sh', args: ['-c', 'true'], tools: {} } } };
    const { handle } = await fixture.start([final('unused')], mcpInput(rogue));
    await assert.rejects(handle.result(), (err: Error) => {
      const chain: string[] = [];
      for (let e: unknown = err; e instanceof Error; e = e.cause) chain.push(e.message);
      assert.match(chain.join(' | '), /\/bin\/sh is not in this worker's AGENT_MCP_COMMANDS/);
      return true;
    });
  });

  it('reads a file through the reference filesystem server (read-only by config)', async () => {
    const fs: McpConfig = {
      servers: {
        fs: {
          command: process.execPath,
          args: [FS_MAIN, FOLDER],
          tools: { read_text_file: { allowed: true }, write_file: { allowed: false } },
        },
      },
    };
    const file = path.join(FOLDER, 'note.txt');
    const big = path.join(FOLDER, 'big.txt');
    writeFileSync(big, 'x'.repeat(OBSERVATION_MAX_BYTES * 4));
    const capped = await fixture.run([tool('fs.read_text_file', { path: big }), final('A long file.')], mcpInput(fs));
    const cut = capped.result.history[0]!.observation;
    assert.equal(cut.truncated, true, 'a result over the cap is cut');
    assert.ok(cut.bytes > OBSERVATION_MAX_BYTES * 4 && JSON.stringify(cut.data).length < OBSERVATION_MAX_BYTES * 2);
    assert.equal(cut.trust, 'untrusted');
    const read = await fixture.run(
      [tool('fs.read_text_file', { path: file }), final('The note says refunds within 14 days.')],
      mcpInput(fs, { goal: 'What does the note say?' }),
    );
    assert.equal(read.result.stop_reason, 'success', JSON.stringify(read.result.trace));
    assert.match(JSON.stringify(read.result.history[0]!.observation.data), /refunds within 14 days/);
    assert.equal(read.result.history[0]!.observation.source, 'fs');
    const write = await fixture.run([tool('fs.write_file', { path: file, content: 'x' })], mcpInput(fs));
    assert.equal(write.result.stop_reason, 'tool_denied:fs.write_file');
  });
});

describe('a run with an MCP server over HTTP', () => {
  it('retries a call whose server was killed mid-call, and the run completes', async () => {
    await http.start([], { AGENT_TOOL_PAUSE_MS: '60000' });
    const { id, handle } = await fixture.start(
      [tool('support.get_user_billing', { user_id: 42 }), final('pro_monthly, 49 USD.')],
      mcpInput(httpSupport()),
    );
    await eventually('the server holds the call', () => (/call get_user_billing/.test(http.log) ? true : undefined));
    await http.kill();
    await http.start();
    const result = await handle.result();
    assert.equal(result.stop_reason, 'success', `${id}: ${JSON.stringify(result.trace)}`);
    const events = (await handle.fetchHistory()).events ?? [];
    const started = events.find((e) => e.activityTaskStartedEventAttributes);
    const attempts = events
      .filter((e) => e.activityTaskStartedEventAttributes)
      .map((e) => e.activityTaskStartedEventAttributes!.attempt!);
    assert.ok(started, 'the call started');
    assert.ok(Math.max(...attempts) >= 2, `the call was retried (attempts: ${attempts.join(',')})`);
    await http.kill();
  });

  it('a server that lists new tools mid-run does not widen the run', async () => {
    await http.start();
    const { result, handle } = await fixture.run(async (_req, index) => {
      if (index === 0) return tool('support.get_user_billing', { user_id: 42 });
      // Now the server offers issue_refund too (the config allows it, the discovery did not list it).
      await http.kill();
      await http.start(['--effects']);
      return tool('support.issue_refund', { user_id: 42, amount_usd: 49, reason: 'within the window' });
    }, mcpInput(httpSupport()));
    assert.equal(result.stop_reason, 'tool_denied:support.issue_refund');
    assert.equal((await activityTypes(handle)).filter((t) => t === 'mcp_list_tools').length, 1);
    await http.kill();
  });

  it('a cancel reaches the in-flight MCP request', async () => {
    await http.start([], { AGENT_TOOL_PAUSE_MS: '60000' });
    const { handle } = await fixture.start(
      [tool('support.get_user_billing', { user_id: 42 })],
      mcpInput(httpSupport()),
    );
    await eventually('the server holds the call', () => (/call get_user_billing/.test(http.log) ? true : undefined));
    await handle.cancel();
    await eventually('the server hears the cancel', () =>
      /get_user_billing cancelled by the client/.test(http.log) ? true : undefined,
    ).catch(async (err: unknown) => {
      throw new Error(
        `${String(err)}; server log: ${http.log}; worker: ${fixture.worker
          .output()
          .split('\n')
          .filter((l) => /billing|cancel|Cancel|heartbeat/i.test(l))
          .slice(-15)
          .join('\n')}`,
      );
    });
    await assert.rejects(handle.result());
    await http.kill();
  });

  it('an effect behind a confirmation waits for the operator, survives a worker crash, and is applied once', async () => {
    await shop.start(['--effects'], { AGENT_RETAIL_DB: RETAIL_DB });
    const ivan = { email: 'ivan.santos3158@example.com', user_id: 'ivan_santos_6635', order: '#W8770097' };
    const config: McpConfig = {
      servers: {
        shop: {
          url: shop.url,
          run_identity: true,
          tools: {
            find_user_id_by_email: { allowed: true, authenticates: true },
            cancel_pending_order: { allowed: true, effectful: true, needs_confirmation: true },
            get_order_details: { allowed: true },
          },
        },
      },
    };
    const queue = fixture.queue('mcp-crash');
    const first = fixture.startWorker(WORKER_MCP_ENV, queue);
    await first.ready;
    const { id, handle } = await fixture.start(
      [
        tool('shop.find_user_id_by_email', { email: ivan.email }),
        tool('shop.cancel_pending_order', { order_id: ivan.order, reason: 'no longer needed' }),
        final('Your order #W8770097 is cancelled.'),
      ],
      { domain: 'retail', goal: 'Cancel my pending order', principal: undefined, allow: [], mcp: config },
      { on: queue },
    );
    const pending = await eventually('the call awaits approval', () => pendingApproval(handle));
    assert.equal(pending.tool, 'shop.cancel_pending_order');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 0, 'nothing is written before the approval');
    await first.kill();
    await fixture.startWorker(WORKER_MCP_ENV, queue).ready;
    await answerApproval(fixture.client, id, { decision: 'approve', operator: 'test' });
    const result = await handle.result();
    assert.equal(result.stop_reason, 'success', JSON.stringify(result.trace));
    const cancelled = result.history.find(
      (h) => h.action.kind === 'tool' && h.action.name === 'shop.cancel_pending_order',
    );
    assert.equal(cancelled?.observation.ok, true, JSON.stringify(cancelled?.observation));
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 1);
    assert.deepEqual(
      (result.effects ?? []).map((e) => [e.tool, e.state]),
      [['shop.cancel_pending_order', 'confirmed']],
    );

    // A new run under the same workflow id (adversary finding 1) is another run: it does not act
    // as the customer the earlier one authenticated, though the server saw that run's key before.
    const again = await fixture.start(
      [tool('shop.get_order_details', { order_id: ivan.order }), final('unused')],
      { domain: 'retail', goal: 'Show my order', principal: undefined, allow: [], mcp: config },
      { on: queue, id },
    );
    const next = await again.handle.result();
    const read = next.history.find((h) => h.action.kind === 'tool' && h.action.name === 'shop.get_order_details');
    assert.equal(read?.observation.ok, false, JSON.stringify(read?.observation));
    assert.match(JSON.stringify(read?.observation), /not_authenticated/);
    await shop.kill();
  });

  it('an effect approved, then cut off by a worker crash after the server committed it, is retried with its key and applied once', async () => {
    // The server commits the first request of a key, then stalls as if its answer were lost.
    await slowShop.start(['--effects'], { AGENT_RETAIL_DB: SLOW_DB, AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: '60000' });
    const queue = fixture.queue('mcp-midcall');
    const first = fixture.startWorker(WORKER_MCP_ENV, queue);
    await first.ready;
    const { id, handle } = await fixture.start(
      [
        tool('shop.find_user_id_by_email', { email: IVAN.email }),
        tool('shop.cancel_pending_order', { order_id: IVAN.order, reason: 'no longer needed' }),
        final('Your order #W8770097 is cancelled.'),
      ],
      retailInput(shopConfig(slowShop.url, { needs_confirmation: true })),
      { on: queue },
    );
    await eventually('the call awaits approval', () => pendingApproval(handle));
    await answerApproval(fixture.client, id, { decision: 'approve', operator: 'test' });
    const key = await eventually(
      'the server committed and holds the call',
      () => /call cancel_pending_order \(key ([^,\s]+), attempt 1\)/.exec(slowShop.log)?.[1],
    );
    await eventually('the write is committed', async () =>
      (await countAppliedWrites(SLOW_DB, id)) === 1 ? true : undefined,
    );
    await first.kill();
    await fixture.startWorker(WORKER_MCP_ENV, queue).ready;
    const result = await handle.result();
    assert.equal(result.stop_reason, 'success', JSON.stringify(result.trace));
    assert.ok(slowShop.log.includes(`call cancel_pending_order (key ${key}, attempt 2)`), 'retried with the same key');
    assert.equal(await countAppliedWrites(SLOW_DB, id), 1, 'applied once at the server');
    assert.deepEqual(
      (result.effects ?? []).map((e) => [e.tool, e.state, e.via]),
      [['shop.cancel_pending_order', 'confirmed', 'tool']],
    );
    await slowShop.kill();
  });

  it('an effect cut off by a cancel is looked up by key at the server: not made, never ambiguous', async () => {
    await slowShop.start(['--effects'], { AGENT_RETAIL_DB: SLOW_DB, AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS: '60000' });
    const { id, handle } = await fixture.start(
      [
        tool('shop.find_user_id_by_email', { email: IVAN.email }),
        tool('shop.cancel_pending_order', { order_id: IVAN.order, reason: 'no longer needed' }),
        final('unused'),
      ],
      retailInput(shopConfig(slowShop.url, { reconcile_by_key: true })),
    );
    const key = await eventually(
      'the server holds the call before its commit',
      () => /call cancel_pending_order \(key ([^,\s]+), attempt 1\)/.exec(slowShop.log)?.[1],
    );
    await handle.cancel();
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'cancelled');
    assert.ok(slowShop.log.includes(`lookup cancel_pending_order (key ${key})`), slowShop.log);
    assert.deepEqual(
      (result.effects ?? []).map((e) => [e.tool, e.state, e.via]),
      [['shop.cancel_pending_order', 'not_made', 'reconcile']],
    );
    assert.equal(await countAppliedWrites(SLOW_DB, id), 0);
    await slowShop.kill();
  });
});

describe("an MCP tool's owned object", () => {
  it("is looked up at the server before anyone is asked: another customer's order is policy_denied:other_user", async () => {
    await shop.start(['--effects'], { AGENT_RETAIL_DB: RETAIL_DB });
    const { result, handle } = await fixture.run(
      [
        tool('shop.find_user_id_by_email', { email: IVAN.email }),
        tool('shop.cancel_pending_order', { order_id: ANYA_ORDER, reason: 'no longer needed' }),
      ],
      retailInput(shopConfig(shop.url, { needs_confirmation: true, owned_arg: 'order_id' })),
    );
    assert.equal(result.stop_reason, 'policy_denied:other_user', JSON.stringify(result.trace));
    assert.deepEqual(await activityTypes(handle), [
      'mcp_list_tools',
      'decide',
      'shop.find_user_id_by_email',
      'decide',
      'owner_shop.cancel_pending_order',
    ]);
    assert.equal(await pendingApproval(handle), undefined, 'nobody was asked');
  });

  it('a lookup that fails (the server gone) ends tool_error, and nobody is asked', async () => {
    const { result, handle } = await fixture.run(
      async (_req, index) => {
        if (index === 0) return tool('shop.find_user_id_by_email', { email: IVAN.email });
        await shop.kill();
        return tool('shop.cancel_pending_order', { order_id: IVAN.order, reason: 'no longer needed' });
      },
      retailInput(shopConfig(shop.url, { needs_confirmation: true, owned_arg: 'order_id' })),
    );
    assert.equal(result.stop_reason, 'tool_error:shop.cancel_pending_order', JSON.stringify(result.trace));
    assert.equal((await activityTypes(handle)).at(-1), 'owner_shop.cancel_pending_order');
    assert.equal(await pendingApproval(handle), undefined, 'nobody was asked');
  });
});

const IVAN = { email: 'ivan.santos3158@example.com', order: '#W8770097' };
const ANYA_ORDER = '#W6436609';
const SLOW_DB = path.join(FOLDER, 'retail-slow.sqlite');
const slowShop = new HttpMcpServer('retail');
after(() => slowShop.kill());

function shopConfig(url: string, effect: Partial<McpToolConfig>): McpConfig {
  return {
    servers: {
      shop: {
        url,
        run_identity: true,
        tools: {
          find_user_id_by_email: { allowed: true, authenticates: true },
          cancel_pending_order: { allowed: true, effectful: true, ...effect },
        },
      },
    },
  };
}

function retailInput(mcp: McpConfig): Partial<AgentInput> {
  return { domain: 'retail', goal: 'Cancel my pending order', principal: undefined, allow: [], mcp };
}
