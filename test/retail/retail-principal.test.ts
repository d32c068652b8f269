// Issue 29, item 6: an order id is not an identity. Before authentication only retail tools that
// change nothing and name nobody run, and after it a tool returns only the principal's own records.
// Properties over generated calls (the differential test's arbitraries) × auth states, each call run
// through the gate (workflows/agent/policy.ts) and, when let through, the runtime's wrapper of the tool
// (define-tool.ts) on the τ² database; what "names a person" means is read off the results of
// τ²'s own tools, not off the tools' options. The ground truth of the 74 τ² tasks still gets through.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import fc from 'fast-check';
import { registryOf } from '../../common/tools/tool-catalog';
import type { ToolSpec } from '../../common/tools/tool-catalog';
import { checkPrincipalPolicy } from '../../workflows/agent/policy';
import { retailDomain } from '../../domains/retail/pack';
import type { RetailDB } from '../../domains/retail/db';
import { snapshot } from '../../domains/retail/db';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { RetailToolError } from '../../domains/retail/errors';
import type { RetailRecords, RetailServices, WriteRecord } from '../../domains/retail/services';
import { retailToolsByName } from '../../domains/retail/tools/index';
import { mcpToolContext } from '../../mcp-server/tool-context';
import { planReplay } from '../../eval/tau2/replay-plan';
import { loadTasks } from '../../eval/tau2/task';
import type { Call } from '../helpers/retail-calls';
import { callArbitraries, sampleDb } from '../helpers/retail-calls';
import { REPO_ROOT } from '../helpers/harness';

const FULL = loadRetailDb();
const SAMPLE = sampleDb(FULL);
const registry: Readonly<Record<string, ToolSpec>> = registryOf(retailDomain.tools);
const handlers = new Map(retailDomain.tools.map((tool) => [tool.name, tool]));
const USER_IDS = new Set(Object.keys(FULL.users));
const EMAILS = new Map(Object.values(FULL.users).map((u) => [u.email.toLowerCase(), u.user_id]));

/** The users a result names: their user id or email anywhere in it. */
function usersNamed(data: unknown): Set<string> {
  const text = JSON.stringify(data ?? null).toLowerCase();
  const named = new Set<string>();
  for (const token of text.match(/[a-z0-9_.+-]+(@[a-z0-9.-]+)?/g) ?? []) {
    if (USER_IDS.has(token)) named.add(token);
    const byEmail = EMAILS.get(token);
    if (byEmail !== undefined) named.add(byEmail);
  }
  return named;
}

/** A conversation's database in memory: reads and once-per-key writes on `db`. */
function memoryServices(db: RetailDB): RetailServices {
  const written = new Map<string, WriteRecord>();
  const records: RetailRecords = {
    kind: 'sqlite',
    read: async (_run, fn) => fn(db),
    async write(_run, key, _tool, apply) {
      const prior = written.get(key);
      if (prior) return { record: prior, reconciled: true };
      const done = apply(db);
      const record: WriteRecord = done.ok
        ? { state: 'applied', result: done.result }
        : { state: 'refused', error: done.error };
      written.set(key, record);
      return { record, reconciled: false };
    },
    reconcile: async (key) => written.get(key),
  };
  return { records: () => records };
}

/** What τ²'s own tool returns for the call (on a copy: a write may change it), or undefined when it refuses. */
function referenceResult(db: RetailDB, call: Call): unknown {
  const tool = retailToolsByName.get(call.tool)!;
  const parsed = tool.args.safeParse(call.args);
  if (!parsed.success) return undefined;
  try {
    return tool.handler(snapshot(db), parsed.data);
  } catch (err) {
    if (err instanceof RetailToolError) return undefined;
    throw err;
  }
}

/** The owner of the orders (or the user) a sequence is about: the principal it would authenticate as. */
function ownerOf(calls: readonly Call[], db: RetailDB): string | undefined {
  for (const { args } of calls) {
    if (typeof args.user_id === 'string' && Object.hasOwn(db.users, args.user_id)) return args.user_id;
    if (typeof args.order_id === 'string' && Object.hasOwn(db.orders, args.order_id))
      return db.orders[args.order_id]!.user_id;
  }
  return undefined;
}

const AUTHENTICATES = new Set(retailDomain.tools.filter((t) => t.authenticates).map((t) => t.name));
/** Tools seen naming a person in τ²'s own results, non-authentication ones (for the coverage check). */
const seenNaming = new Set<string>();

describe('retail: an order id is not an identity (issue 29, item 6)', () => {
  it('every call whose τ² result names a person is refused before authentication', () => {
    const { sequence } = callArbitraries(SAMPLE, FULL);
    fc.assert(
      fc.property(sequence, (calls) => {
        const db = snapshot(SAMPLE);
        for (const call of calls) {
          if (AUTHENTICATES.has(call.tool)) continue; // how the principal is learnt
          const spec = registry[call.tool]!;
          const parsed = spec.args.safeParse(call.args);
          if (!parsed.success) continue; // the gateway refuses it before the policy
          const named = usersNamed(referenceResult(db, call));
          if (named.size === 0) continue;
          seenNaming.add(call.tool);
          const decision = checkPrincipalPolicy(spec, parsed.data, { principal: undefined, history: [] });
          assert.deepEqual(decision, { allowed: false, rule: 'not_authenticated' }, `${call.tool} names ${[...named]}`);
        }
      }),
      { numRuns: 300 },
    );
    // The generated calls did reach the tools that name people (the property is not empty).
    for (const tool of ['get_order_details', 'get_user_details']) assert.ok(seenNaming.has(tool), tool);
  });

  it('a call the gate lets through returns only the principal (nobody before authentication)', async () => {
    const { sequence } = callArbitraries(SAMPLE, FULL);
    const others = Object.keys(SAMPLE.users);
    let foreignOrdersAsked = 0;
    await fc.assert(
      fc.asyncProperty(sequence, fc.constantFrom('none', 'owner', 'other'), fc.nat(), async (calls, who, pick) => {
        const db = snapshot(SAMPLE);
        const owner = ownerOf(calls, db);
        const principal =
          who === 'none' ? undefined : who === 'owner' && owner !== undefined ? owner : others[pick % others.length];
        const services = memoryServices(db);
        for (const [i, call] of calls.entries()) {
          if (AUTHENTICATES.has(call.tool)) continue;
          const spec = registry[call.tool]!;
          const parsed = spec.args.safeParse(call.args);
          if (!parsed.success) continue;
          if (!checkPrincipalPolicy(spec, parsed.data, { principal, history: [] }).allowed) continue;
          const orderId = parsed.data.order_id;
          if (typeof orderId === 'string' && db.orders[orderId] && db.orders[orderId].user_id !== principal)
            foreignOrdersAsked++;
          const ctx = mcpToolContext(call.tool, services, 'conversation', new AbortController().signal);
          const input = { args: parsed.data, idempotency_key: `k${i}`, ...(principal ? { principal } : {}) };
          const observation = await handlers.get(call.tool)!.handler(parsed.data, ctx, input);
          const named = [...usersNamed(observation.data)].filter((user) => user !== principal);
          assert.deepEqual(named, [], `${call.tool} ${JSON.stringify(call.args)} for ${principal ?? 'nobody'}`);
        }
      }),
      { numRuns: 200 },
    );
    assert.ok(foreignOrdersAsked > 0, "another user's orders were asked for");
  });

  it('the attack: an order id read before authentication is denied; after it, another customer’s order reads as not found', async () => {
    const anya = FULL.users.anya_garcia_3271!;
    const ivan = FULL.users.ivan_santos_6635!;
    const order = { order_id: anya.orders[0]! };
    // Before: the order's user id and zip were returned, and find_user_id_by_name_zip accepted them.
    assert.deepEqual(checkPrincipalPolicy(registry.get_order_details, order, { principal: undefined, history: [] }), {
      allowed: false,
      rule: 'not_authenticated',
    });
    const read = async (principal: string, args: { order_id: string }) => {
      const ctx = mcpToolContext(
        'get_order_details',
        memoryServices(snapshot(FULL)),
        'c',
        new AbortController().signal,
      );
      return handlers.get('get_order_details')!.handler(args, ctx, { args, idempotency_key: 'k', principal });
    };
    const theirs = await read(ivan.user_id, order);
    // The same answer as an order that does not exist: a stranger learns nothing, not even that it does.
    const none = await read(ivan.user_id, { order_id: '#W0000000' });
    assert.deepEqual([theirs.ok, theirs.data], [false, none.data]);
    assert.deepEqual(none.data, { ok: false, error: 'Order not found' });
    const mine = await read(ivan.user_id, { order_id: ivan.orders[0]! });
    assert.equal(mine.ok, true);
    assert.equal((mine.data as { user_id: string }).user_id, ivan.user_id);
  });

  it("τ²'s ground truth of every task still gets through: authentication first, then the customer's own records", async () => {
    const tasks = loadTasks(path.join(REPO_ROOT, 'domains', 'retail', 'data', 'tasks-train.json'));
    assert.equal(tasks.length, 74);
    for (const task of tasks) {
      const db = loadRetailDb();
      const services = memoryServices(db);
      let principal: string | undefined;
      for (const [i, call] of planReplay(task, db).calls.entries()) {
        const spec = registry[call.name]!;
        const args = spec.args.parse(call.args);
        const decision = checkPrincipalPolicy(spec, args, { principal, history: [] });
        assert.deepEqual(decision, { allowed: true }, `task ${task.id}: ${call.name}`);
        const ctx = mcpToolContext(call.name, services, 'conversation', new AbortController().signal);
        const input = { args, idempotency_key: `${task.id}:${i}`, ...(principal ? { principal } : {}) };
        const observation = await handlers.get(call.name)!.handler(args, ctx, input);
        if (spec.authenticates && observation.ok && principal === undefined) principal = observation.data as string;
        // A read of an order the task names answers as τ² does (only the two ids τ² itself lacks are not found).
        if (call.name === 'get_order_details' && Object.hasOwn(FULL.orders, String(args.order_id)))
          assert.equal(observation.ok, true, `task ${task.id}: ${String(args.order_id)}`);
      }
    }
  });
});
