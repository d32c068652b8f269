// Found by an adversary (findings 6 and 9): the authentication result in the model's view, through a
// real worker, the real `openai` client, the dev server and a real MCP server on loopback. An MCP
// tool configured `authenticates` is never compacted and says whom the run acts for, and the
// decide input's count of compacted results is the count the model got; after continue-as-new the
// authentication the principal came from is still shown, and only it says so (not a later look-up
// of another customer with the same tool).
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveHttp } from '../../mcp-server/http';
import type { McpHttpServer } from '../../mcp-server/http';
import type { McpConfig } from '../../common/mcp/config';
import { retailTools } from '../../domains/retail/tools/index';
import { byStep, final, tool } from '../../offline-model/scripted-replies';
import type { StepReply } from '../../offline-model/scripted-replies';
import { requestView } from '../../offline-model/request-view';
import { agentFixture } from '../helpers/agent-fixture';

const RETAIL_DB = path.join(mkdtempSync(path.join(os.tmpdir(), 'view-auth-')), 'retail.sqlite');
const IVAN = { email: 'ivan.santos3158@example.com', user_id: 'ivan_santos_6635' };
const OLIVIA_EMAIL = 'olivia.jackson2465@example.com';

let accounts: McpHttpServer | undefined;
const fixture = agentFixture({
  queue: 'view-auth',
  workerEnv: { AGENT_RETAIL_DB: RETAIL_DB, AGENT_MCP_URLS: 'http://127.0.0.1:', OPENAI_TIMEOUT_SECONDS: '30' },
  prepare: async () => {
    // `login` names the customer (its one text is the user id); `lookup` answers ~2,500 characters.
    accounts = await serveHttp(() => {
      const server = new Server({ name: 'accounts', version: '0.0.1' }, { capabilities: { tools: {} } });
      const args = { type: 'object' as const, properties: { q: { type: 'string' } }, required: ['q'] };
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [
          { name: 'login', description: 'Names the customer.', inputSchema: args },
          { name: 'lookup', description: 'Looks a record up.', inputSchema: args },
        ],
      }));
      server.setRequestHandler(CallToolRequestSchema, (req) => ({
        content: [
          {
            type: 'text',
            text:
              req.params.name === 'login'
                ? 'u_ivan'
                : JSON.stringify({ q: req.params.arguments?.q, text: 'r'.repeat(2500) }),
          },
        ],
      }));
      return server;
    }, 0);
  },
});

after(async () => {
  if (accounts) await accounts.close();
});

/** The decide activities' inputs in the run's history (the last run of a chain), in order. */
async function decideViews(handle: Awaited<ReturnType<typeof fixture.start>>['handle']) {
  const events = (await handle.fetchHistory()).events ?? [];
  return events
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'decide')
    .map((e) => {
      const payload = e.activityTaskScheduledEventAttributes!.input!.payloads![0]!;
      const input = JSON.parse(Buffer.from(payload.data!).toString('utf8')) as { view?: { compacted: number } };
      return input.view;
    });
}

describe('the authentication result in the view', { concurrency: 1 }, () => {
  it('an MCP tool that authenticates is never compacted, says whom the run acts for; the compacted count is exact', async () => {
    const mcp: McpConfig = {
      servers: {
        accounts: {
          url: accounts!.url,
          tools: { login: { allowed: true, authenticates: true }, lookup: { allowed: true } },
        },
      },
    };
    const replies: Record<number, StepReply> = { 1: tool('accounts.login', { q: 'ivan' }) };
    for (let s = 2; s <= 6; s++) replies[s] = tool('accounts.lookup', { q: `record ${s}` });
    replies[7] = final('Done.');
    const { result, requests, handle } = await fixture.run(byStep(replies), {
      domain: 'retail',
      goal: 'Look the records up.',
      principal: undefined,
      allow: [],
      mcp,
      context_tokens: 2_000,
      budget: { max_steps: 10, max_tool_calls: 10, max_seconds: 600 },
    });
    assert.equal(result.stop_reason, 'success', JSON.stringify(result).slice(0, 500));
    const last = requestView(requests.at(-1)!.body)!;
    const login = last.steps.find((s) => s.step === 1)!;
    assert.equal(login.observation.compacted, undefined, 'the authentication result is whole');
    assert.deepEqual(login.observation.authenticated_principal, { user_id: 'u_ivan' });
    const compacted = last.steps.filter((s) => s.observation.compacted === true).map((s) => s.step);
    assert.ok(compacted.length > 0, 'some look-ups compacted');
    const view = (await decideViews(handle)).at(-1)!;
    assert.equal(view.compacted, compacted.length, `the decide input says ${view.compacted}, shown ${compacted}`);
  });

  it('across continue-as-new: the authentication is carried and only it is labelled (not a later look-up of another customer)', async () => {
    const replies: Record<number, StepReply> = {
      1: tool('find_user_id_by_email', { email: IVAN.email }),
      2: tool('find_user_id_by_email', { email: OLIVIA_EMAIL }),
    };
    for (let s = 3; s <= 22; s++) replies[s] = tool('calculate', { expression: `${s} + 1` });
    replies[23] = final('Done.');
    const { result, requests, handle } = await fixture.run(byStep(replies), {
      domain: 'retail',
      goal: 'Serve the retail customer.',
      principal: undefined,
      allow: retailTools.map((t) => t.name),
      conversation: {},
      continue_as_new_every: 22,
      budget: { max_steps: 30, max_tool_calls: 30, max_seconds: 600 },
    });
    assert.equal(result.stop_reason, 'success', JSON.stringify(result).slice(0, 500));
    assert.notEqual((await handle.describe()).runId, handle.firstExecutionRunId, 'the run continued as new');
    const last = requestView(requests.at(-1)!.body)!;
    const labelled = last.steps.filter((s) => s.observation.authenticated_principal !== undefined);
    assert.deepEqual(
      labelled.map((s) => [s.step, s.observation.data, s.observation.authenticated_principal]),
      [[1, IVAN.user_id, { user_id: IVAN.user_id }]],
    );
    const olivia = last.steps.find((s) => s.step === 2);
    assert.match(String(olivia?.observation.data), /^olivia_/, "the other customer's look-up is shown unlabelled");
  });
});
