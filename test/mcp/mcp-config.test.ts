// The MCP config (one-line errors, env var names instead of secrets) and how a recorded discovery
// becomes a run's tools: only what the config allows and the server listed, arguments checked
// against the listed JSON Schema, confirmation by the customer in a conversation and by an
// operator otherwise.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseMcpConfig } from '../../common/mcp/config';
import type { McpConfig } from '../../common/mcp/config';
import type { McpDiscovery } from '../../common/mcp/discovery';
import { checkToolCall } from '../../workflows/agent/gateway';
import { mcpToolNames, mcpToolSpecs } from '../../workflows/mcp/tools';
import { attributeStopReason } from '../../common/temporal/search-attributes';
import { runInputOf } from '../../cli/run-input';

const CONFIG: McpConfig = {
  servers: {
    shop: {
      url: 'http://127.0.0.1:3100/mcp',
      headers_from_env: { Authorization: 'SHOP_MCP_TOKEN' },
      tools: {
        lookup: { allowed: true, principal_arg: 'user', sensitive: ['card'] },
        refund: {
          allowed: true,
          effectful: true,
          needs_confirmation: true,
          timeout_seconds: 5,
          max_attempts: 2,
          owned_arg: 'order',
        },
        wipe: { allowed: false },
        ghost: { allowed: true },
      },
    },
  },
};

const DISCOVERY: McpDiscovery[] = [
  {
    server: 'shop',
    hash: 'x',
    tools: [
      {
        name: 'lookup',
        description: 'Look a user up',
        inputSchema: {
          type: 'object',
          properties: { user: { type: 'string' } },
          required: ['user'],
          additionalProperties: false,
        },
      },
      {
        name: 'refund',
        description: 'Refund',
        inputSchema: { type: 'object', properties: { amount: { type: 'number', minimum: 0 } }, required: ['amount'] },
      },
      { name: 'wipe', description: 'Wipe everything', inputSchema: { type: 'object' } },
      { name: 'unnamed', description: 'Not in the config', inputSchema: { type: 'object' } },
    ],
  },
];

describe('the MCP config', () => {
  it('accepts servers by command or URL, headers by env var name', () => {
    assert.equal(parseMcpConfig(CONFIG).ok, true);
  });

  it('refuses a header value (only env var names), an unknown field, a bad server name: one line with its path', () => {
    const literal = parseMcpConfig({ servers: { shop: { url: 'http://x/mcp', headers: { a: 'secret' }, tools: {} } } });
    assert.equal(literal.ok, false);
    assert.match((literal as { error: string }).error, /^invalid MCP config: servers\.shop: /);
    assert.doesNotMatch((literal as { error: string }).error, /secret/);
    const name = parseMcpConfig({ servers: { 'Bad Name': { command: 'x', tools: {} } } });
    assert.match((name as { error: string }).error, /^invalid MCP config: servers\.Bad Name: a server name/);
    const none = parseMcpConfig({ servers: {} });
    assert.match((none as { error: string }).error, /name at least one server/);
    const envName = parseMcpConfig({ servers: { s: { command: 'x', env: ['NOT-A-NAME'], tools: {} } } });
    assert.match((envName as { error: string }).error, /servers\.s\.env\.0: an environment variable name/);
    for (const bad of [literal, name, none, envName]) assert.doesNotMatch((bad as { error: string }).error, /\n/);
  });

  it('is read by `--mcp FILE`, a bad file being one usage line', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-config-'));
    const good = path.join(dir, 'good.json');
    writeFileSync(good, JSON.stringify(CONFIG));
    assert.deepEqual(runInputOf('goal', { mcp: good, user: 42 }, 'hint').mcp, CONFIG);
    const broken = path.join(dir, 'broken.json');
    writeFileSync(broken, '{');
    assert.throws(
      () => runInputOf('goal', { mcp: broken, user: 42 }, 'hint'),
      /--mcp: .*broken\.json is not valid JSON/,
    );
    assert.throws(
      () => runInputOf('goal', { mcp: path.join(dir, 'none.json'), user: 42 }, 'hint'),
      /--mcp: cannot read .*ENOENT/,
    );
  });
});

describe("a run's MCP tools", () => {
  const byName = (conversation: boolean) =>
    Object.fromEntries(mcpToolSpecs(CONFIG, DISCOVERY, conversation).map((spec) => [spec.name, spec]));

  it('are the tools the config allows and the discovery listed, nothing else', () => {
    assert.deepEqual(Object.keys(byName(false)).sort(), ['shop.lookup', 'shop.refund']);
  });

  it('carry the config: effect, timeout, retries, principal argument, sensitive fields, who confirms', () => {
    const operator = byName(false);
    assert.equal(operator['shop.refund']!.effectful, true);
    assert.equal(operator['shop.refund']!.needsApproval, true);
    assert.equal(operator['shop.refund']!.needsConsent, undefined);
    assert.equal(operator['shop.refund']!.timeoutSeconds, 5);
    assert.equal(operator['shop.refund']!.maxAttempts, 2);
    assert.equal(operator['shop.lookup']!.principalArg, 'user');
    assert.equal(operator['shop.refund']!.ownedArg, 'order');
    assert.deepEqual(operator['shop.lookup']!.sensitive, ['card']);
    const customer = byName(true);
    assert.equal(customer['shop.refund']!.needsConsent, true);
    assert.equal(customer['shop.refund']!.needsApproval, undefined);
  });

  it('check arguments against the recorded JSON Schema in the gateway', () => {
    const registry = byName(false);
    const gate = { maxToolCalls: 10, allow: Object.keys(registry), registry, toolCalls: 0, seenCalls: [] };
    assert.equal(checkToolCall('shop.lookup', { user: 'u1' }, gate).allowed, true);
    for (const args of [{ user: 1 }, {}, { user: 'u1', extra: true }]) {
      const decision = checkToolCall('shop.lookup', args, gate);
      assert.deepEqual(
        decision.allowed ? 'allowed' : decision.reason,
        'tool_bad_args:shop.lookup',
        JSON.stringify(args),
      );
    }
    const negative = checkToolCall('shop.refund', { amount: -1 }, gate);
    assert.equal(negative.allowed ? 'allowed' : negative.reason, 'tool_bad_args:shop.refund');
    const denied = checkToolCall('shop.wipe', {}, gate);
    assert.equal(denied.allowed ? 'allowed' : denied.reason, 'tool_denied:shop.wipe');
  });

  it('are described to the model with the schema the server listed', () => {
    const lookup = byName(false)['shop.lookup']!;
    assert.deepEqual(lookup.catalogEntry, {
      name: 'shop.lookup',
      description: 'Look a user up',
      args: DISCOVERY[0]!.tools[0]!.inputSchema,
    });
  });

  it('are looked up by key at their server only when the config says it answers one, and only effects', () => {
    const withLookup: McpConfig = structuredClone(CONFIG);
    withLookup.servers.shop!.tools.refund!.reconcile_by_key = true;
    withLookup.servers.shop!.tools.lookup!.reconcile_by_key = true;
    const specs = Object.fromEntries(mcpToolSpecs(withLookup, DISCOVERY, false).map((spec) => [spec.name, spec]));
    assert.equal(specs['shop.refund']!.reconcileByKey, true);
    assert.equal(specs['shop.lookup']!.reconcileByKey, undefined, 'a read-only tool has no effect to look up');
    assert.equal(byName(false)['shop.refund']!.reconcileByKey, undefined, 'not unless the config says so');
  });

  it("name the stop reason's search attribute when listed or configured, well-formed; model text reads unknown", () => {
    const listing = (name: string) => ({ name, description: '', inputSchema: { type: 'object' as const } });
    const odd: McpDiscovery[] = [
      { ...DISCOVERY[0]!, tools: [...DISCOVERY[0]!.tools, listing('bad name; drop table'), listing('x'.repeat(65))] },
    ];
    const names = mcpToolNames(CONFIG, odd);
    assert.deepEqual([...names].sort(), ['shop.ghost', 'shop.lookup', 'shop.refund', 'shop.unnamed', 'shop.wipe']);
    const registry = {}; // the run's registry holds only the allowed and listed ones
    assert.equal(attributeStopReason('tool_denied:shop.wipe', registry, names), 'tool_denied:shop.wipe');
    assert.equal(attributeStopReason('tool_missing:shop.invented', registry, names), 'tool_missing:unknown');
    assert.equal(attributeStopReason('tool_denied:shop.wipe', registry), 'tool_denied:unknown');
  });
});
