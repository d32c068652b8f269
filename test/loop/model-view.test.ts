// The model's view: the whole run in order as chat messages, compacted past the context budget
// (never a customer's words, never the authentication result), redacted as everywhere else.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import {
  functionNames,
  MODEL_VIEW_MAX_CHARS,
  planView,
  renderView,
  viewForQuery,
} from '../../common/model-view/model-view';
import { estimateTokens } from '../../common/cost/cost';
import { resultOf, RESULT_MAX_CHARS } from '../../workflows/agent/run-result';
import type { ChatMessage, ViewRef, ViewSource } from '../../common/model-view/model-view';
import { registryOf } from '../../common/tools/tool-catalog';
import type { Turn } from '../../common/conversation/conversation';
import type { HistoryEntry } from '../../common/types';
import { DOMAINS } from '../../domains/index';

const retail = DOMAINS.retail!;
const registry = registryOf(retail.tools);
const names = functionNames(Object.keys(registry));

function entry(
  step: number,
  name: string,
  data: unknown,
  extra: Partial<HistoryEntry['observation']> = {},
): HistoryEntry {
  const bytes = JSON.stringify(data).length;
  return {
    step,
    action: { kind: 'tool', name, args: { id: `#${step}` } },
    observation: { tool: name, ok: true, data, source: 'retail-db', bytes, truncated: false, ...extra },
  };
}

function source(history: HistoryEntry[], turns: Turn[] = []): ViewSource {
  return {
    goal: 'help the customer',
    domain: 'retail',
    principal: null,
    conversation: turns.length > 0,
    history,
    turns,
    omitted: { history: 0, turns: 0 },
  };
}

const all = (s: ViewSource): ViewRef => ({
  entries: s.history.length,
  turns: s.turns.at(-1)?.n ?? 0,
  compact_before: 0,
  compacted: 0,
  budget_tokens: 1e6,
});

const roles = (messages: ChatMessage[]) =>
  messages.map((m) =>
    m.role === 'assistant' && m.tool_calls
      ? `call:${m.tool_calls[0]!.id}`
      : m.role === 'tool'
        ? `result:${m.tool_call_id}`
        : `${m.role}:${m.content}`,
  );

describe("the model's view", () => {
  it('the run in order: the customer, the calls with their results, the consent asked before the write it is about', () => {
    const turns: Turn[] = [
      { n: 1, from: 'customer', text: 'cancel order #W1', step: 0 },
      { n: 2, from: 'agent', text: 'Your email?', step: 2 },
      { n: 3, from: 'customer', text: 'a@b.c', step: 2 },
      { n: 4, from: 'agent', text: 'Cancel #W1?', step: 4, consent: { tool: 'cancel_pending_order' } as never },
      { n: 5, from: 'customer', text: 'yes', step: 4 },
      { n: 6, from: 'agent', text: 'Done.', step: 5 },
    ];
    const history = [
      entry(1, 'get_order_details', { order: 1 }),
      entry(3, 'find_user_id_by_email', { user_id: 'u1' }),
      entry(4, 'cancel_pending_order', { status: 'cancelled' }),
    ];
    const s = source(history, turns);
    const messages = renderView(s, all(s), registry, names, 'native');
    assert.deepEqual(roles(messages).slice(1), [
      'user:cancel order #W1',
      'call:call_1',
      'result:call_1',
      'assistant:Your email?',
      'user:a@b.c',
      'call:call_3',
      'result:call_3',
      'assistant:[asked by the runtime before the write] Cancel #W1?',
      'user:yes',
      'call:call_4',
      'result:call_4',
      'assistant:Done.',
    ]);
    assert.equal(JSON.parse(messages[0]!.content!).goal, 'help the customer');
  });

  it('reads only the entries and turns the decision planned with (a turn that arrives meanwhile waits for the next)', () => {
    const s = source(
      [entry(1, 'get_order_details', {})],
      [
        { n: 1, from: 'customer', text: 'hi', step: 0 },
        { n: 2, from: 'customer', text: 'later', step: 1 },
      ],
    );
    const messages = renderView(s, { ...all(s), turns: 1 }, registry, names, 'native');
    assert.deepEqual(roles(messages).slice(1), ['user:hi', 'call:call_1', 'result:call_1']);
  });

  it('past the budget the oldest results are compacted, named, never the authentication result nor a turn', () => {
    const big = { text: 'x'.repeat(3000) };
    const history = [
      entry(1, 'find_user_id_by_email', { user_id: 'u1', pad: 'y'.repeat(3000) }),
      entry(2, 'get_order_details', big),
      entry(3, 'get_order_details', big),
      entry(4, 'get_order_details', big),
    ];
    const turns: Turn[] = [{ n: 1, from: 'customer', text: 'z'.repeat(3000), step: 0 }];
    const s = source(history, turns);
    const roomy = planView(s, registry, 1000, 100_000);
    assert.equal(roomy.ref.compacted, 0);
    const tight = planView(s, registry, 1000, 4_500);
    assert.equal(tight.ref.compacted, 2);
    assert.equal(tight.ref.compact_before, 4);
    assert.ok(tight.chars < roomy.chars);
    const messages = renderView(s, tight.ref, registry, names, 'native');
    const results = messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content));
    assert.equal(results[0].data.user_id, 'u1', 'the authentication result stays');
    assert.equal(results[1].compacted, true);
    assert.match(results[1].note, /call get_order_details again/);
    assert.equal(results[2].compacted, true);
    assert.equal(results[3].data.text, big.text, 'the newest result stays');
    assert.ok(
      messages.some((m) => m.role === 'user' && m.content === turns[0]!.text),
      "the customer's words stay",
    );
  });

  it('a redacted field never reaches the model, whatever the observation', () => {
    const secret = fc.string({ minLength: 8, maxLength: 20 }).map((s) => `SECRET-${s}`);
    fc.assert(
      fc.property(secret, fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 3 }), (value, path) => {
        let data: Record<string, unknown> = { [path.at(-1)!]: value };
        for (const key of path.slice(0, -1).reverse()) data = { [key]: data };
        const history = [entry(1, 'get_user_details', data, { sensitive: [path.join('.')] })];
        const s = source(history);
        for (const mode of ['native', 'json'] as const) {
          const text = JSON.stringify(renderView(s, all(s), registry, names, mode));
          assert.ok(!text.includes(value), `${mode}: ${value} leaked`);
        }
        const compacted = renderView(s, { ...all(s), compact_before: 2, compacted: 1 }, registry, names, 'native');
        assert.ok(!JSON.stringify(compacted).includes(value));
      }),
    );
  });

  it("each decision's messages begin with the previous decision's (a provider's prefix cache applies)", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('tool', 'customer', 'agent'), { maxLength: 30 }), (events) => {
        const history: HistoryEntry[] = [];
        const turns: Turn[] = [];
        let step = 0;
        let previous: ChatMessage[] = [];
        for (const event of events) {
          if (event === 'tool') history.push(entry(++step, 'get_order_details', { step }));
          else if (event === 'agent') turns.push({ n: turns.length + 1, from: 'agent', text: `a${++step}`, step });
          else turns.push({ n: turns.length + 1, from: 'customer', text: `c${turns.length}`, step });
          const s = { ...source(history, turns), conversation: true };
          const now = renderView(s, all(s), registry, names, 'native');
          assert.deepEqual(now.slice(0, previous.length), previous);
          previous = now;
        }
      }),
    );
  });
});

describe('the context budget counts the whole request; the latest result is never compacted (adversary finding 8)', () => {
  const isCompactedResult = (m: ChatMessage) => m.role === 'tool' && JSON.parse(m.content).compacted === true;

  it('a latest result larger than the budget stays whole, the older ones compacted, and the plan says it is over', () => {
    const s = source([
      entry(1, 'get_order_details', { a: 1 }),
      entry(2, 'get_order_details', { text: 'x'.repeat(9_000) }),
    ]);
    // 9,000 characters of system prompt and tools: 3,000 tokens, over a budget of 2,000 on their own.
    const { ref, chars } = planView(s, registry, 9_000, 2_000);
    assert.equal(ref.compacted, 1);
    assert.equal(ref.compact_before, 2);
    assert.equal(ref.over_budget_tokens, estimateTokens(chars));
    const results = renderView(viewForQuery(s, registry, ref), ref, registry, names, 'native').filter(
      (m) => m.role === 'tool',
    );
    assert.deepEqual(results.map(isCompactedResult), [true, false]);
  });

  it('property: the plan counts the request as sent (system prompt and tools, then every message), keeps the latest result, and is over budget only when all else is compacted', () => {
    const entryArb = fc.record({
      name: fc.constantFrom('get_order_details', 'get_product_details', 'find_user_id_by_email'),
      size: fc.integer({ min: 0, max: 6_000 }),
      quotes: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(entryArb, { minLength: 1, maxLength: 12 }),
        fc.array(fc.string({ maxLength: 300 }), { maxLength: 4 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 2_000, max: 12_000 }),
        (specs, texts, fixed, budget) => {
          const history = specs.map((e, i) => entry(i + 1, e.name, { text: (e.quotes ? '"' : 'x').repeat(e.size) }));
          const turns: Turn[] = texts.map((text, i) => ({ n: i + 1, from: 'customer', text, step: i }));
          const s = source(history, turns);
          const { ref, chars } = planView(s, registry, fixed, budget);
          const messages = renderView(viewForQuery(s, registry, ref), ref, registry, names, 'native');
          // What the request sends besides the system prompt and the tools: the messages as JSON.
          assert.equal(chars, fixed + JSON.stringify(messages).length - 1);
          const results = messages.filter((m) => m.role === 'tool');
          assert.equal(isCompactedResult(results.at(-1)!), false, 'the latest result is whole');
          if (estimateTokens(chars) <= budget) assert.equal(ref.over_budget_tokens, undefined);
          else {
            assert.equal(ref.over_budget_tokens, estimateTokens(chars));
            // Nothing more could be compacted: every result but the latest and an authentication's.
            results.slice(0, -1).forEach((m, i) => {
              const auth = history[i]!.action.kind === 'tool' && history[i]!.action.name === 'find_user_id_by_email';
              assert.equal(isCompactedResult(m), !auth, `step ${i + 1}`);
            });
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('the view and the result under a model sending ~30 KB of arguments each call (adversary finding 4)', () => {
  const big = (step: number, size: number): HistoryEntry => ({
    ...entry(step, 'get_order_details', { order: step }),
    action: { kind: 'tool', name: 'get_order_details', args: { order_id: 'x'.repeat(size) } },
  });

  it('the plan fits the budget, the model_view answer stays under its cap, the run result under the payload limit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 20, max: 160 }),
        fc.integer({ min: 20_000, max: 31_000 }),
        fc.integer({ min: 2_000, max: 100_000 }),
        (steps, size, budget) => {
          const history = Array.from({ length: steps }, (_, i) => big(i + 1, size));
          const s = source(history);
          const { ref, chars } = planView(s, registry, 10_000, budget);
          // Every entry but the latest can be compacted, its arguments with it (a compacted entry is a few hundred characters).
          const floor = estimateTokens(10_000 + 2 * size + steps * 500);
          assert.ok(estimateTokens(chars) <= Math.max(budget, floor), `${estimateTokens(chars)} tokens`);
          const answer = viewForQuery(s, registry, ref);
          assert.ok(JSON.stringify(answer).length <= MODEL_VIEW_MAX_CHARS);
          const rendered = renderView(answer, ref, registry, names, 'native');
          assert.ok(JSON.stringify(rendered).length <= 4 * Math.max(budget, floor) + 20_000);
          const state = {
            trace: history.map((e) => ({ step: e.step, args: e.action })),
            windDowns: new Map(),
            history,
          };
          const result = resultOf({ status: 'stopped', stop_reason: 'max_steps' }, state as never, {
            budget: {} as never,
            omitted: { trace: 0, history: 0 },
            extensions: [],
          });
          assert.ok(JSON.stringify(result).length <= RESULT_MAX_CHARS + 100_000);
          assert.equal(result.history.at(-1)!.step, steps);
          assert.equal((result.omitted?.history ?? 0) + result.history.length, steps);
        },
      ),
      { numRuns: 15 },
    );
  });

  it('a compacted call with long arguments says to call the tool again, not "with the same arguments"', () => {
    const s = source([big(1, 5_000), entry(2, 'get_order_details', { order: 2 })]);
    const ref = { ...all(s), compact_before: 2, compacted: 1 };
    const [, call, result] = renderView(viewForQuery(s, registry, ref), ref, registry, names, 'native');
    assert.ok(call!.role === 'assistant' && call!.tool_calls![0]!.function.arguments.length < 200);
    assert.match(String(result!.role === 'tool' && result!.content), /call get_order_details again to read it/);
  });
});
