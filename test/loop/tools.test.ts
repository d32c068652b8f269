// A tool is one file (domains/support/tools/<name>.ts) and one line (the SUPPORT_TOOLS list): the registry the
// gateway reads, the catalog the model sees (arguments as the JSON Schema of the zod schema) and
// the activities a worker registers all come from that list, with nothing restated by hand.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createActivities } from '../../activities';
import { SEED_DATA } from '../../domains/support/seed-data';
import { catalogFor } from '../../common/tools/tool-catalog';
import { defaultAllowedToolsOf, registryOfDomain } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';
import { registryOf } from '../../common/tools/index';
import { defineSupportTool } from '../../domains/support/tools/args';
import type { Observation, ToolInput } from '../../common/types';
import { checkToolCall } from '../../workflows/agent/gateway';
import { TOOL_BAD_ARGS } from '../../common/agent-messages';

/** A tool that exists only here: what a new tool file would hold. */
const lookupTier = defineSupportTool({
  name: 'lookup_tier',
  description: "Get a user's plan tier",
  args: z.strictObject({ user_id: z.number().int().positive().describe('the user') }),
  timeoutSeconds: 5,
  maxAttempts: 2,
  async handler({ user_id }, ctx) {
    const user = (await ctx.services.data()).users[String(user_id)];
    return ctx.envelope('users-service', user !== undefined, { tier: user?.tier ?? null });
  },
});

const withLookupTier = [...supportDomain.tools, lookupTier];

function activitiesWith(tools = withLookupTier) {
  return createActivities({
    llm: {
      apiKey: 'not-set',
      baseURL: 'http://127.0.0.1:9',
      model: 'm',
      timeoutMs: 1000,
      price: { input_usd_per_mtok: 0, output_usd_per_mtok: 0 },
    },
    data: async () => SEED_DATA,
    refunds: () => {
      throw new Error('no refunds in this test');
    },
    refundFaults: { pauseBeforeCommitMs: 0, pauseAfterCommitMs: 0 },
    domains: [{ ...supportDomain, tools }],
  });
}

const input = (args: Record<string, unknown>): ToolInput => ({ args, idempotency_key: 'k', principal: '42' });

describe('a tool defined in its one file', () => {
  it('is in the registry, the catalog (arguments as JSON Schema) and the worker activities', async () => {
    const registry = registryOf(withLookupTier);
    assert.equal(registry.lookup_tier, lookupTier);

    const [entry] = catalogFor(['lookup_tier'], registry);
    assert.deepEqual(entry, {
      name: 'lookup_tier',
      description: "Get a user's plan tier",
      args: {
        type: 'object',
        properties: {
          user_id: { type: 'integer', exclusiveMinimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'the user' },
        },
        required: ['user_id'],
        additionalProperties: false,
      },
    });

    const activities = activitiesWith() as unknown as Record<string, (i: ToolInput) => Promise<Observation>>;
    const activity = activities.lookup_tier!;
    assert.equal(activity.name, 'lookup_tier', 'registered under the tool name');
    const observation: Observation = await new MockActivityEnvironment().run(activity, input({ user_id: 7 }));
    assert.deepEqual(
      { tool: observation.tool, ok: observation.ok, source: observation.source, data: observation.data },
      { tool: 'lookup_tier', ok: true, source: 'users-service', data: { tier: 'free' } },
    );
  });

  it('the gateway enforces its schema; the activity refuses arguments that bypassed the gateway', async () => {
    const ctx = {
      maxToolCalls: 5,
      allow: ['lookup_tier'],
      registry: registryOf(withLookupTier),
      toolCalls: 0,
      seenCalls: [],
    };
    assert.equal(checkToolCall('lookup_tier', { user_id: 7 }, ctx).allowed, true);
    const bad = checkToolCall('lookup_tier', { user_id: 'seven' }, ctx);
    assert.equal(bad.allowed ? undefined : bad.reason, 'tool_bad_args:lookup_tier');

    const activity = (activitiesWith() as unknown as Record<string, (i: ToolInput) => Promise<Observation>>)
      .lookup_tier!;
    await assert.rejects(new MockActivityEnvironment().run(activity, input({ user_id: 'seven' })), {
      type: TOOL_BAD_ARGS,
      nonRetryable: true,
    });
  });

  it('a tool not in the list is nowhere', () => {
    assert.equal(Object.hasOwn(registryOfDomain(supportDomain), 'lookup_tier'), false);
    assert.deepEqual(catalogFor(['lookup_tier'], registryOfDomain(supportDomain)), []);
    assert.equal('lookup_tier' in activitiesWith([...supportDomain.tools]), false);
  });
});

describe('the shipped tools', () => {
  it('each is registered, cataloged with the JSON Schema of its arguments, and a worker activity of its name', () => {
    const activities = activitiesWith([...supportDomain.tools]) as Record<string, unknown>;
    assert.deepEqual(Object.keys(registryOfDomain(supportDomain)), [
      'get_user_profile',
      'get_user_billing',
      'search_policy',
      'issue_refund',
    ]);
    for (const tool of supportDomain.tools) {
      assert.equal(registryOfDomain(supportDomain)[tool.name], tool);
      const [entry] = catalogFor([tool.name], registryOfDomain(supportDomain));
      const { $schema: _dialect, ...schema } = z.toJSONSchema(tool.args, { io: 'input' });
      assert.deepEqual(entry, { name: tool.name, description: tool.description, args: schema });
      assert.equal((activities[tool.name] as { name: string }).name, tool.name);
      // A reconcile hook is the activity reconcile_<name>; a tool without one has none.
      assert.equal(`reconcile_${tool.name}` in activities, tool.reconcile !== undefined, tool.name);
    }
    assert.deepEqual(
      supportDomain.tools.filter((tool) => tool.reconcile).map((tool) => tool.name),
      ['issue_refund'],
    );
  });

  it('what each means to the runtime is in its definition', () => {
    const meaning = (name: string) => {
      const t = registryOfDomain(supportDomain)[name]!;
      return [
        t.effectful === true,
        t.needsApproval === true,
        t.principalArg,
        t.policy !== undefined,
        t.statesFacts === true,
      ];
    };
    assert.deepEqual(meaning('get_user_profile'), [false, false, 'user_id', false, false]);
    assert.deepEqual(meaning('search_policy'), [false, false, undefined, false, false]);
    assert.deepEqual(meaning('issue_refund'), [true, true, 'user_id', true, true]);
  });

  it('the model is told what the schema allows: an amount in USD with two decimals, no other keys', () => {
    const [refund] = catalogFor(['issue_refund'], registryOfDomain(supportDomain));
    assert.deepEqual(refund!.args.required, ['user_id', 'amount_usd', 'reason']);
    assert.equal(refund!.args.additionalProperties, false);
    assert.match(
      JSON.stringify(refund!.args.properties),
      /"amount_usd":\{"type":"number".*"description":"USD, at most two decimals"/,
    );
  });

  it('the default allowlist is every read-only tool (the three look-ups), never an effect', () => {
    assert.deepEqual(defaultAllowedToolsOf(supportDomain), ['get_user_profile', 'get_user_billing', 'search_policy']);
    for (const name of defaultAllowedToolsOf(supportDomain))
      assert.equal(registryOfDomain(supportDomain)[name]!.effectful, undefined);
  });
});
