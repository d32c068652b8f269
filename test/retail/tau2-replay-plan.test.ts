// The τ² retail suite's planning, over every task of the shipped task file: the file parses (a bad
// one is refused with one line), each task's expected end state is its ground truth applied to the
// initial database, and the replay plan (authentication first, repeated calls left out) reaches that
// same state while acting only for the user it authenticated. The replay model's position comes
// from the request alone.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { RetailDB } from '../../domains/retail/db';
import { getDbHash } from '../../domains/retail/hash';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { PythonInt } from '../../domains/retail/python/int';
import { retailToolsByName } from '../../domains/retail/tools/index';
import { DbHasher, sameJson } from '../../eval/tau2/db-hash';
import { applyGoldAction, expectedState } from '../../eval/tau2/expected';
import type { ExpectedState } from '../../eval/tau2/expected';
import { AUTH_TOOLS, callSignature, planReplay } from '../../eval/tau2/replay-plan';
import type { PlannedCall } from '../../eval/tau2/replay-plan';
import { payloadOf, REPLAY_FINAL_ANSWER, replayMove, replayScript } from '../../eval/tau2/replay-model';
import { goldActions, loadTasks, parseTasks, TaskFileError } from '../../eval/tau2/task';
import type { Tau2Task } from '../../eval/tau2/task';
import { REPO_ROOT } from '../helpers/harness';

const TASKS_FILE = path.join(REPO_ROOT, 'domains', 'retail', 'data', 'tasks-train.json');
const tasks = loadTasks(TASKS_FILE);
const INITIAL_HASH = getDbHash(loadRetailDb());
const hasher = new DbHasher();
// Hashing the 2.8 MB database takes tens of ms: each task's expected state is computed once.
const expectedStates = new Map<string, ExpectedState>();
const expectedOf = (task: Tau2Task): ExpectedState => {
  if (!expectedStates.has(task.id)) expectedStates.set(task.id, expectedState(task));
  return expectedStates.get(task.id)!;
};

/** The replay plan's calls on a fresh database, as the runtime would let them act (authenticated user only). */
function replayOnDb(calls: readonly PlannedCall[]): { db: RetailDB; principal?: string; foreignWrites: string[] } {
  const db = loadRetailDb();
  let principal: string | undefined;
  const foreignWrites: string[] = [];
  for (const call of calls) {
    const tool = retailToolsByName.get(call.name)!;
    if (tool.kind === 'write') {
      const owner =
        typeof call.args.order_id === 'string' ? db.orders[call.args.order_id]?.user_id : (call.args.user_id as string);
      if (owner !== principal) foreignWrites.push(`${call.name} for ${owner} as ${principal}`);
    }
    const args = tool.args.safeParse(call.args);
    if (!args.success) continue;
    try {
      const result = tool.handler(db, args.data);
      if (AUTH_TOOLS.includes(call.name)) principal = result as string;
    } catch {
      // a refused call: an observation with ok false, the run goes on
    }
  }
  return { db, ...(principal !== undefined ? { principal } : {}), foreignWrites };
}

function request(steps_completed: number, last?: PlannedCall): { body: unknown } {
  const payload = {
    state_summary: { steps_completed, tools_used: [] },
    untrusted_observations: {
      steps: last ? [{ step: steps_completed, action: { kind: 'tool', name: last.name, args: last.args } }] : [],
    },
  };
  return {
    body: {
      messages: [
        { role: 'system', content: 'policy' },
        { role: 'user', content: JSON.stringify(payload) },
      ],
    },
  };
}

describe('τ² retail tasks: expected state and replay plan', () => {
  it('the shipped train tasks parse', () => {
    assert.equal(tasks.length, 74);
    assert.equal(new Set(tasks.map((t) => t.id)).size, 74);
  });

  it("a task's expected state changes the initial database exactly when a ground-truth write succeeds", () => {
    for (const task of tasks) {
      const expected = expectedOf(task);
      const db = loadRetailDb();
      const applied = goldActions(task).map((action) => applyGoldAction(db, action));
      assert.equal(expected.writes, applied.filter((a) => a.ok && a.write).length, `task ${task.id}`);
      if (expected.writes > 0)
        assert.notEqual(expected.hash, INITIAL_HASH, `task ${task.id}: its writes change the database`);
      else assert.equal(expected.hash, INITIAL_HASH, `task ${task.id}: reads change nothing`);
    }
  });

  it("the suite's hash tells apart what json.dumps writes apart: a Python int, -0.0, key order", () => {
    const db = loadRetailDb();
    const order = Object.values(db.orders).find((o) => o.status === 'delivered')!;
    const base = hasher.hash(db);
    assert.equal(base, INITIAL_HASH);
    for (const change of [
      () => (order.exchange_price_difference = 0),
      () => (order.exchange_price_difference = new PythonInt(0)),
      () => (order.exchange_price_difference = -0),
    ]) {
      change();
      assert.equal(hasher.hash(db), getDbHash(db));
    }
    assert.ok(!sameJson(0, -0) && !sameJson(0, new PythonInt(0)) && !sameJson({ a: 1, b: 2 }, { b: 2, a: 1 }));
    assert.ok(sameJson({ a: [1, 'x', null] }, { a: [1, 'x', null] }));
  });

  /** The loop detector's view of a plan: a write as it is, a read with the writes applied before it. */
  function loopSignatures(calls: ReturnType<typeof planReplay>['calls']): string[] {
    const world = loadRetailDb();
    let applied = 0;
    return calls.map((call) => {
      const tool = retailToolsByName.get(call.name)!;
      const sig = callSignature(call.name, call.args);
      const signed = tool.kind === 'write' || applied === 0 ? sig : `${sig} after ${applied} write(s)`;
      try {
        tool.handler(world, tool.args.parse(call.args));
        if (tool.kind === 'write') applied++;
      } catch {
        // a refusal changes nothing the detector counts
      }
      return signed;
    });
  }

  it('every replay plan reaches the expected state, authenticated as the owner of what it changes', () => {
    let authenticated = 0;
    let skipped = 0;
    let rereads = 0;
    for (const task of tasks) {
      const plan = planReplay(task);
      const { db, principal, foreignWrites } = replayOnDb(plan.calls);
      assert.equal(hasher.hash(db), expectedOf(task).hash, `task ${task.id}: replay end state`);
      assert.deepEqual(foreignWrites, [], `task ${task.id}: every write is on the authenticated user's records`);
      if (plan.authenticates !== undefined) {
        authenticated++;
        assert.equal(plan.calls[0]!.name, 'find_user_id_by_email', `task ${task.id}`);
        assert.equal(principal, plan.authenticates, `task ${task.id}`);
      }
      // Nothing the runtime's loop detection stops: no write repeated, no read repeated with no write
      // applied in between (the runtime signs a read with the count of writes applied before it).
      const signatures = loopSignatures(plan.calls);
      assert.equal(new Set(signatures).size, signatures.length, `task ${task.id}: a repeated call`);
      const plain = plan.calls.map((c) => callSignature(c.name, c.args));
      if (new Set(plain).size < plain.length) rereads++;
      skipped += plan.skipped.length;
    }
    // The file has both: tasks that write before any authentication, and repeated reads.
    assert.ok(authenticated >= 20, `${authenticated} plans authenticate first`);
    assert.ok(skipped > 0);
    // And tasks that read again what a write changed (the runtime lets those through).
    assert.ok(rereads > 0, 'some plan re-reads after a write');
  });

  it('a plan authenticates by the email of the user whose order the first action touches', () => {
    const task = {
      id: 'x',
      user_scenario: { instructions: 'cancel my order' },
      evaluation_criteria: {
        actions: [
          { action_id: 'x_0', requestor: 'assistant', name: 'get_product_details', arguments: { product_id: '1' } },
          {
            action_id: 'x_1',
            requestor: 'assistant',
            name: 'cancel_pending_order',
            arguments: { order_id: '#W2378156', reason: 'no longer needed' },
          },
        ],
      },
    } as Tau2Task;
    const db = loadRetailDb();
    const plan = planReplay(task, db);
    const owner = db.orders['#W2378156']!.user_id;
    assert.equal(plan.authenticates, owner);
    assert.deepEqual(plan.calls[0], { name: 'find_user_id_by_email', args: { email: db.users[owner]!.email } });
    assert.equal(plan.calls.length, 3);
  });

  it('the replay model answers from the request: the same request, the same action; off the plan, it stops', () => {
    const task = tasks.find((t) => planReplay(t).calls.length >= 4)!;
    const plan = planReplay(task);
    const script = replayScript(plan) as (req: unknown, i: number) => { action: unknown };
    for (let i = 0; i <= plan.calls.length; i++) {
      const req = request(i, plan.calls[i - 1]);
      const first = script(req, 0);
      assert.deepEqual(script(req, 7), first, 'a retried decision gets the same answer');
      const expected = plan.calls[i]
        ? { kind: 'tool', name: plan.calls[i]!.name, args: plan.calls[i]!.args }
        : { kind: 'final', answer: REPLAY_FINAL_ANSWER };
      assert.deepEqual(first.action, expected, `decision after ${i} steps`);
    }
    // The last step is not the plan's previous call: the run went off the plan.
    const off = replayMove(plan, payloadOf(request(2, plan.calls[0])));
    assert.ok('off' in off);
    assert.ok('off' in replayMove(plan, payloadOf({ body: { messages: [] } })));
  });

  it('a bad task file is refused with one line naming the task and the field', () => {
    const good = JSON.stringify(tasks.slice(0, 2));
    assert.equal(parseTasks('t.json', good).length, 2);
    const cases: Array<[string, RegExp]> = [
      ['{"not": "a list"}', /^t\.json: expected a JSON list of τ² tasks$/],
      ['[', /^t\.json: not valid JSON/],
      [
        good.replace('"find_user_id_by_name_zip"', '"find_user"'),
        /^t\.json: task 0: .*actions\.0\.name: not a retail tool$/,
      ],
      [good.replace('"reason_for_call"', '"reason"'), /^t\.json: task 0: user_scenario\.instructions/],
      [JSON.stringify([tasks[0], tasks[0]]), /^t\.json: task 0: the id is used by another task$/],
    ];
    for (const [text, message] of cases) {
      assert.throws(
        () => parseTasks('t.json', text),
        (err: unknown) => err instanceof TaskFileError && message.test(err.message) && !err.message.includes('\n'),
        text.slice(0, 60),
      );
    }
    assert.throws(() => loadTasks(TASKS_FILE, ['0', 'nope']), /no task with id nope/);
  });
});
