// The retail tools (domains/retail) against τ²-bench's own Python tools on the same calls: the same result
// (the JSON of the model_dump, byte for byte as Python's json.dumps writes it) or the same error (class and
// message; for calculate's SyntaxErrors the class only), and the same get_db_hash after every call. The calls are (a) the ground-truth actions of the 74
// train tasks, each task from a fresh database, and (b) sequences generated with fast-check on a sample of
// the database, valid and invalid; at the end, every error message of the reference's source must have been
// produced. The reference runs unchanged (test/tau2-shim, one Python process for the whole file).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as fc from 'fast-check';
import type { RetailDB } from '../../domains/retail/db';
import { snapshot } from '../../domains/retail/db';
import { RetailToolError } from '../../domains/retail/errors';
import { getDbHash } from '../../domains/retail/hash';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { floatRepr, pyRound } from '../../domains/retail/python/float';
import type { PyJson } from '../../domains/retail/python/json';
import { pyJsonDumps } from '../../domains/retail/python/json';
import { retailTools, retailToolsByName } from '../../domains/retail/tools';
import type { Call } from '../helpers/retail-calls';
import { boundedPowers, callArbitraries, exampleSequences, expressionArb, sampleDb } from '../helpers/retail-calls';
import { IncrementalDbHash } from '../helpers/retail-db-hash';
import type { ReferenceAnswer, Touch } from '../helpers/tau2-reference';
import { ReferenceTools, tau2RetailDir } from '../helpers/tau2-reference';

const SEQUENCES = Number(process.env.RETAIL_DIFF_SEQUENCES ?? 300);
const EXPRESSIONS = Number(process.env.RETAIL_DIFF_EXPRESSIONS ?? 3000);

type Outcome = { ok: true; result: string } | { ok: false; error_type: string; error: string };

/** What the reference produced, for the coverage check and the summary. */
const seen = {
  calls: 0,
  byTool: new Map<string, number>(),
  errors: new Map<string, { type: string; tools: Set<string>; count: number }>(),
};

function record(tool: string, outcome: Outcome): void {
  seen.calls++;
  seen.byTool.set(tool, (seen.byTool.get(tool) ?? 0) + 1);
  if (!outcome.ok) {
    const entry = seen.errors.get(outcome.error) ?? { type: outcome.error_type, tools: new Set(), count: 0 };
    entry.tools.add(tool);
    entry.count++;
    seen.errors.set(outcome.error, entry);
  }
}

/** Results of `**` with a non-integer exponent that differ from CPython in the last bit only (V8's pow is not glibc's). */
const powLastBit: string[] = [];

/**
 * Both sides agree, except for the one documented divergence (domains/retail/python/float.ts): a power
 * with a non-integer exponent goes to Math.pow, which may round the last bit differently from glibc's pow.
 */
function assertSameOutcome(call: Call, ts: Outcome, py: Outcome, message: string): void {
  if (
    call.tool === 'calculate' &&
    ts.ok &&
    py.ok &&
    ts.result !== py.result &&
    /\*\*/.test(String(call.args.expression))
  ) {
    const [a, b] = [Number(JSON.parse(ts.result)), Number(JSON.parse(py.result))];
    if (oneUlpApart(a, b) || oneHundredthApart(a, b)) {
      powLastBit.push(String(call.args.expression));
      return;
    }
  }
  // The same error naming a complex power (`(-8)**-0.5` is complex in Python), its parts a last bit apart.
  if (
    call.tool === 'calculate' &&
    !ts.ok &&
    !py.ok &&
    ts.error_type === py.error_type &&
    ts.error !== py.error &&
    /\*\*/.test(String(call.args.expression)) &&
    sameUpToLastBits(String(ts.error), String(py.error))
  ) {
    powLastBit.push(String(call.args.expression));
    return;
  }
  // A SyntaxError's text is CPython's parser's; the calculator refuses the same inputs in words of its own.
  if (call.tool === 'calculate' && !ts.ok && !py.ok && py.error_type === 'SyntaxError') {
    assert.equal(ts.error_type, py.error_type, `${message}: ${ts.error} / ${py.error}`);
    return;
  }
  assert.deepEqual(ts, py, message);
}

/**
 * Two texts equal but for their numbers, each pair at most 4 ulps apart: a complex power goes through
 * exp, log, cos and sin, and each library rounds those on its own (seen: 2 ulps in a real part near 0).
 */
function sameUpToLastBits(a: string, b: string): boolean {
  const NUMBER = /-?\d+(?:\.\d+)?(?:e[-+]?\d+)?/g;
  if (a.replace(NUMBER, '#') !== b.replace(NUMBER, '#')) return false;
  const xs = a.match(NUMBER) ?? [];
  const ys = b.match(NUMBER) ?? [];
  return xs.every((x, i) => x === ys[i] || ulpsApart(Number(x), Number(ys[i])) <= 4n);
}

function ulpsApart(a: number, b: number): bigint {
  if (!Number.isFinite(a) || !Number.isFinite(b) || Math.sign(a) !== Math.sign(b)) return 1n << 62n;
  const bits = (x: number) => new BigInt64Array(new Float64Array([Math.abs(x)]).buffer)[0]!;
  const d = bits(a) - bits(b);
  return d < 0n ? -d : d;
}

function oneUlpApart(a: number, b: number): boolean {
  if (!Number.isFinite(a) || !Number.isFinite(b) || Math.sign(a) !== Math.sign(b)) return false;
  const bits = (x: number) => new BigInt64Array(new Float64Array([Math.abs(x)]).buffer)[0]!;
  const d = bits(a) - bits(b);
  return d === 1n || d === -1n;
}

/**
 * calculate rounds to 2 decimals: a pow a last bit apart that sits on a .xx5 boundary rounds to two
 * neighbouring hundredths (4**22.18: 22578267164148.195 in V8, ...148.19 in glibc, so ...148.2 vs ...148.19).
 */
function oneHundredthApart(a: number, b: number): boolean {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  const slack = 4 * Number.EPSILON * Math.max(Math.abs(a), Math.abs(b));
  return Math.abs(Math.abs(a - b) - 0.01) <= slack;
}

/** The TypeScript tool on `db`, its outcome written as the reference server writes it. */
function runTs(db: RetailDB, call: Call): Outcome {
  const tool = retailToolsByName.get(call.tool);
  assert.ok(tool, `no TypeScript tool ${call.tool}`);
  const args: unknown = tool.args.parse(call.args);
  try {
    return { ok: true, result: pyJsonDumps(tool.handler(db, args) as PyJson, { sortKeys: true }) };
  } catch (e) {
    if (e instanceof RetailToolError) return { ok: false, error_type: e.pythonType, error: e.message };
    throw e;
  }
}

/** The entries a call may change: its order, that order's user, its user. */
function touchOf(db: RetailDB, args: Record<string, unknown>): Touch {
  const touch: Touch = { orders: [], users: [] };
  const orderId = args.order_id;
  if (typeof orderId === 'string' && Object.hasOwn(db.orders, orderId)) {
    touch.orders.push(orderId);
    touch.users.push(db.orders[orderId]!.user_id);
  }
  const userId = args.user_id;
  if (typeof userId === 'string' && Object.hasOwn(db.users, userId)) touch.users.push(userId);
  return touch;
}

/** Both sides on one database: the TypeScript one here, the reference's in the Python process. */
class Side {
  readonly hasher: IncrementalDbHash;
  private readonly dirty: Touch = { orders: [], users: [] };

  constructor(
    readonly reference: ReferenceTools,
    private readonly pristine: RetailDB,
    public db: RetailDB,
  ) {
    this.hasher = new IncrementalDbHash(db);
  }

  /** One call on both sides: same outcome, same database hash afterwards. */
  async call(call: Call, where: string): Promise<void> {
    const touch = touchOf(this.db, call.args);
    this.dirty.orders.push(...touch.orders);
    this.dirty.users.push(...touch.users);
    const ts = runTs(this.db, call);
    for (const id of touch.orders) this.hasher.invalidate('orders', id);
    for (const id of touch.users) this.hasher.invalidate('users', id);
    const tsHash = this.hasher.digest();
    const answer: ReferenceAnswer = await this.reference.call(call.tool, call.args, touch, true);
    const { hash: pyHash, ...py } = answer;
    record(call.tool, py);
    const label = `${where}: ${call.tool}(${JSON.stringify(call.args)})`;
    assertSameOutcome(call, ts, py, `${label}: outcome`);
    assert.equal(tsHash, pyHash, `${label}: database hash after the call`);
  }

  /**
   * The reference's own get_db_hash agrees with both incremental hashes and, when asked, with getDbHash (a
   * full dump of the database: 0.1 s for the whole one).
   */
  async checkpoint(where: string, full = true): Promise<string> {
    const py = await this.reference.request<{ incremental: string; reference: string }>({ op: 'hash' });
    assert.equal(py.incremental, py.reference, `${where}: the reference server's incremental hash`);
    assert.equal(this.hasher.digest(), py.reference, `${where}: incremental hash`);
    if (full) assert.equal(getDbHash(this.db), py.reference, `${where}: getDbHash`);
    return py.reference;
  }

  /** Puts back every entry the calls since the last restore could have changed, on both sides. */
  async restore(): Promise<void> {
    const orders = [...new Set(this.dirty.orders)];
    const users = [...new Set(this.dirty.users)];
    for (const id of orders) {
      this.db.orders[id] = snapshot(this.pristine.orders[id]!);
      this.hasher.invalidate('orders', id);
    }
    for (const id of users) {
      this.db.users[id] = snapshot(this.pristine.users[id]!);
      this.hasher.invalidate('users', id);
    }
    this.dirty.orders.length = 0;
    this.dirty.users.length = 0;
    await this.reference.request({ op: 'restore', orders, users });
  }

  /** A fresh copy on both sides (after a failure, when anything may differ). */
  async reset(db: RetailDB | null): Promise<void> {
    this.db = snapshot(this.pristine);
    this.hasher.use(this.db);
    this.dirty.orders.length = 0;
    this.dirty.users.length = 0;
    await this.reference.request({ op: 'use', db });
  }
}

/** The reference's ValueError messages, from its source; an f-string's fields match any text. */
function referenceErrorMessages(): { template: string; pattern: RegExp }[] {
  const source = fs.readFileSync(path.join(tau2RetailDir(), 'reference', 'tools.py'), 'utf8');
  const templates = new Set<string>();
  for (const m of source.matchAll(/raise ValueError\(\s*(f?)"((?:[^"\\]|\\.)*)"\s*\)/g)) templates.add(m[2]!);
  return [...templates].map((template) => {
    const parts = template.split(/\{[^}]*\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    return { template, pattern: new RegExp(`^${parts.join('.+')}$`) };
  });
}

/**
 * Messages no call can produce: "Item {item_id} not found" (exchange and modify items) follows a check that
 * every item id is in the order, as many times as asked, and each later lookup finds an item (the items
 * changed before it were other ids, or the same id once more than was counted).
 */
const UNREACHABLE = new Set(['Item {item_id} not found']);

describe('retail tools: TypeScript against the τ²-bench reference', () => {
  let reference: ReferenceTools;
  const full = loadRetailDb();

  before(() => {
    reference = ReferenceTools.start();
  });
  after(async () => {
    await reference.close();
  });

  it('has the same tools, with the same kinds', async () => {
    const { tools } = await reference.request<{ tools: Record<string, string> }>({ op: 'tools' });
    assert.deepEqual(
      Object.fromEntries(retailTools.map((t) => [t.name, t.kind]).sort()),
      Object.fromEntries(Object.entries(tools).sort()),
    );
  });

  it('(a) the ground-truth actions of the train tasks, each task from a fresh database', async () => {
    const tasks = JSON.parse(fs.readFileSync(path.join(tau2RetailDir(), 'tasks-train.json'), 'utf8')) as {
      id: string;
      evaluation_criteria: { actions: { name: string; arguments: Record<string, unknown> }[] };
    }[];
    assert.equal(tasks.length, 74);
    const side = new Side(reference, full, snapshot(full));
    await side.reset(null);
    const initial = await side.checkpoint('before the tasks');
    let actions = 0;
    const finals = new Set<string>();
    for (const [n, task] of tasks.entries()) {
      for (const [i, action] of task.evaluation_criteria.actions.entries()) {
        await side.call({ tool: action.name, args: action.arguments }, `task ${task.id}, action ${i}`);
        actions++;
      }
      finals.add(await side.checkpoint(`task ${task.id}, end state`, n % 8 === 0));
      await side.restore();
    }
    assert.equal(await side.checkpoint('after the tasks'), initial);
    assert.equal(actions, 365);
    assert.ok(finals.size > 40, `the tasks end in ${finals.size} different states`);
  });

  it('(b) generated call sequences, valid and invalid, on a sample of the database', async () => {
    const sample = sampleDb(full);
    const side = new Side(reference, sample, snapshot(sample));
    await side.reset(sample);
    await side.checkpoint('the sample database');
    const { sequence } = callArbitraries(sample, full);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(sequence, async (calls) => {
        run++;
        let failed = true;
        try {
          for (const [i, call] of calls.entries()) await side.call(call, `sequence ${run}, call ${i}`);
          await side.checkpoint(`sequence ${run}, end state`);
          failed = false;
        } finally {
          if (failed) await side.reset(sample);
          else await side.restore();
        }
      }),
      { numRuns: SEQUENCES, examples: exampleSequences(sample).map((calls) => [calls] as [Call[]]) },
    );
  });

  it('(c) calculate on generated expressions: the values and exceptions of Python eval', async () => {
    const side = new Side(reference, full, snapshot(full));
    await side.reset(null);
    const before = await side.checkpoint('before calculate', false);
    const touch: Touch = { orders: [], users: [] };
    await fc.assert(
      fc.asyncProperty(expressionArb, async (expression) => {
        const call = { tool: 'calculate', args: { expression } };
        const { hash: _, ...py } = await reference.call(call.tool, call.args, touch, false);
        record(call.tool, py);
        assertSameOutcome(call, runTs(side.db, call), py, `calculate(${JSON.stringify(expression)})`);
      }),
      // The first example is one whose power V8 rounds one bit off glibc (found by this property in CI);
      // the last, a complex power in an error message, parts one bit off CPython's (found the same way).
      { numRuns: EXPRESSIONS, examples: [['560.36 *242.96-  4**63.68'], ['4**63.68'], ['((-8)**-0.5)(**0)']] },
    );
    assert.equal(await side.checkpoint('after calculate', false), before);
  });

  it('(d) calculate on raw strings of its alphabet: the same value, refused exactly where Python refuses', async () => {
    const side = new Side(reference, full, snapshot(full));
    await side.reset(null);
    const touch: Touch = { orders: [], users: [] };
    const piece = fc.constantFrom(...'0123456789+-*/(). ', '**', '//', '...', '00', '1.5', '.5', '()');
    const raw = fc
      .array(piece, { maxLength: 30 })
      .map((pieces) => pieces.join(''))
      .filter(boundedPowers);
    // The nesting limits: the tokenizer's 200 parentheses, the compiler's recursion, the parser's stack.
    const deep = ['('.repeat(200) + '1' + ')'.repeat(200), '('.repeat(201) + '1' + ')'.repeat(201)];
    deep.push('-'.repeat(2900) + '1', '-'.repeat(3100) + '1', '-'.repeat(7000) + '1', '1' + '0'.repeat(4300));
    await fc.assert(
      fc.asyncProperty(raw, async (expression) => {
        const call = { tool: 'calculate', args: { expression } };
        const { hash: _, ...py } = await reference.call(call.tool, call.args, touch, false);
        record(call.tool, py);
        assertSameOutcome(call, runTs(side.db, call), py, `calculate(${JSON.stringify(expression)})`);
      }),
      { numRuns: EXPRESSIONS / 3, examples: deep.map((e) => [e]) },
    );
  });

  it('repr() and round(x, 2) of any float, as Python writes them', async () => {
    const bits = (x: number) => {
      const view = new DataView(new ArrayBuffer(8));
      view.setFloat64(0, x);
      return [...new Uint8Array(view.buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');
    };
    const floats = fc.oneof(
      fc.double(),
      fc.double({ min: -1e6, max: 1e6 }),
      fc.integer({ min: -1e9, max: 1e9 }).map((n) => n / 1000),
      fc.integer({ min: -1e7, max: 1e7 }).map((n) => n / 100 + 0.005),
      fc.constantFrom(1e16, 1e15, 1e-4, 1e-5, 9999999999999998, 0.1 + 0.2, 2.675, 5e-324, -0),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(floats, { minLength: 50, maxLength: 50 }), async (xs) => {
        const py = await reference.request<{ repr: string[]; round2: string[] }>({ op: 'floats', bits: xs.map(bits) });
        assert.deepEqual(xs.map(floatRepr), py.repr);
        assert.deepEqual(
          xs.map((x) => floatRepr(pyRound(x, 2))),
          py.round2,
        );
      }),
      { numRuns: 40 },
    );
  });

  it('every error message of the reference source was produced, by both sides alike', (t) => {
    const templates = referenceErrorMessages();
    assert.ok(templates.length >= 20, `only ${templates.length} messages found in tools.py`);
    const hits = new Map<string, number>(templates.map((m) => [m.template, 0]));
    // Literal messages first, then f-strings with the most literal text: "{item_id} not found" is last.
    const ordered = [...templates].sort(
      (a, b) =>
        Number(a.template.includes('{')) - Number(b.template.includes('{')) || b.template.length - a.template.length,
    );
    for (const [message, { type, count }] of seen.errors) {
      if (type !== 'ValueError') continue;
      const match = ordered.find((m) => m.pattern.test(message));
      assert.ok(match, `a ValueError not in the reference source: ${message}`);
      hits.set(match.template, hits.get(match.template)! + count);
    }
    const missing = [...hits].filter(([template, n]) => n === 0 && !UNREACHABLE.has(template)).map(([m]) => m);
    assert.deepEqual(missing, [], 'reference errors never produced');
    for (const template of UNREACHABLE) assert.equal(hits.get(template), 0, `${template} was produced after all`);

    const others = [...seen.errors].filter(([, e]) => e.type !== 'ValueError');
    t.diagnostic(
      `${seen.calls} calls compared (${[...seen.byTool].map(([tool, n]) => `${tool} ${n}`).join(', ')}); ` +
        `${hits.size - UNREACHABLE.size} reference ValueError messages, all produced ` +
        `(${[...hits].map(([m, n]) => `"${m}" ${n}`).join(', ')}); ` +
        `${others.length} distinct Python errors of calculate (${new Set(others.map(([, e]) => e.type)).size} classes); ` +
        `${powLastBit.length} non-integer powers one bit off CPython${powLastBit.length ? `: ${powLastBit.join(' | ')}` : ''}`,
    );
  });
});
