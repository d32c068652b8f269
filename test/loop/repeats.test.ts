// Loop detection that a natural conversation never trips (workflows/agent/repeats.ts): the run's own loop
// (runLoop) driven in process by scripted decisions, with a customer who answers, writes that run,
// and reads repeated with or without news in between. A property test over such sequences: the run
// ends loop_detected iff some read is repeated more than max_repeats times with nothing new in
// between (or a write is made again with no customer message since), and a repeat never calls the tool.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EMPTY_USAGE, resolveBudget } from '../../common/cost/budget';
import type { Transcript } from '../../common/conversation/conversation';
import type { AgentInput, DecideOutput, HistoryEntry, Observation } from '../../common/types';
import { DOMAINS, registryOfDomain } from '../../domains/index';
import { carryInPlace } from '../../workflows/agent/carry';
import { runLoop } from '../../workflows/agent/run-loop';
import type { LoopPorts, LoopState } from '../../workflows/agent/run-loop';
import { DEFAULT_MAX_REPEATS } from '../../workflows/agent/repeats';

const retail = DOMAINS.retail!;
const registry = registryOfDomain(retail);

type Event =
  | { kind: 'read'; order: number }
  | { kind: 'product'; product: number }
  | { kind: 'write'; order: number }
  | { kind: 'customer' };

interface Outcome {
  stop: string;
  /** Tool activity executions, by tool. */
  executed: string[];
  history: HistoryEntry[];
  trace: LoopState['trace'];
}

const orderId = (n: number) => `#W000000${n}`;

function actionOf(event: Event | undefined): object {
  if (event === undefined) return { kind: 'final', answer: 'Done.' };
  switch (event.kind) {
    case 'read':
      return { kind: 'tool', name: 'get_order_details', args: { order_id: orderId(event.order) } };
    case 'product':
      return { kind: 'tool', name: 'get_product_details', args: { product_id: String(event.product) } };
    case 'write':
      return {
        kind: 'tool',
        name: 'cancel_pending_order',
        args: { order_id: orderId(event.order), reason: 'no longer needed' },
      };
    case 'customer':
      return { kind: 'message', text: 'Could you confirm the order id?' };
  }
}

/** The loop with in-process ports: the model follows `events`, the customer answers, every write is confirmed. */
async function run(
  events: readonly Event[],
  opts: { maxRepeats?: number; every?: number; contextTokens?: number } = {},
): Promise<Outcome> {
  const input: AgentInput = {
    goal: 'help the customer',
    domain: 'retail',
    allow: retail.tools.map((t) => t.name),
    budget: {
      max_steps: events.length + 2,
      max_tool_calls: 1000,
      max_seconds: 3600,
      ...(opts.maxRepeats !== undefined ? { max_repeats: opts.maxRepeats } : {}),
    },
    validator: 'off',
    conversation: {},
    ...(opts.every !== undefined ? { continue_as_new_every: opts.every } : {}),
    ...(opts.contextTokens !== undefined ? { context_tokens: opts.contextTokens } : {}),
  };
  const budget = resolveBudget(input.budget);
  const state: LoopState = {
    usage: { ...EMPTY_USAGE },
    trace: [],
    history: [],
    seenCalls: [],
    effects: [],
    principal: 'user_1',
    windDowns: new Map(),
  };
  let transcript: Transcript = { turns: [], total: 0, agent_messages: 0, customer_messages: 0 };
  const customerWrites = () => {
    transcript = { ...transcript, total: transcript.total + 1, customer_messages: transcript.customer_messages + 1 };
  };
  const executed: string[] = [];
  let decisions = 0;
  const end = (stop: string): Outcome => ({ stop, executed, history: state.history, trace: state.trace });
  const ports: LoopPorts<Outcome> = {
    state,
    input,
    domain: retail,
    registry,
    workflowId: 'repeats-test',
    stateKey: 'repeats-test',
    stepsAtStart: 0,
    budget: () => budget,
    elapsedMs: () => 0,
    continueAsNewSuggested: () => false,
    policy: () => ({ allowed: true }),
    pricing: async () => undefined,
    decide: async (): Promise<DecideOutput> => {
      const text = JSON.stringify(actionOf(events[decisions++]));
      // A system prompt and tools of 9,000 characters, as a real decide activity measures them.
      const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
      return { text, model: 'scripted', usage, fixed_chars: 9_000 };
    },
    callTool: async (call) => {
      executed.push(call.name);
      const data = { order_id: call.args.order_id ?? null, call: executed.length };
      return { tool: call.name, ok: true, data, source: 'test', bytes: 10, truncated: false } satisfies Observation;
    },
    reconcile: () => Promise.reject(new Error('no reconcile in this test')),
    owner: async () => null,
    pending: (fields) => ({ ...fields, requested_at: '', expires_at: '' }),
    askPerson: async () => undefined,
    conversation: {
      transcript: () => transcript,
      ended: () => false,
      unread: () => false,
      message: async () => {
        customerWrites();
        return 'answered';
      },
      awaitingReply: () => undefined,
      consent: async () => {
        customerWrites();
        return { reply: 'answered', text: 'yes' };
      },
    },
    cutOff: { check: () => undefined, isCancellation: () => false },
    record: {
      step: () => undefined,
      toolCall: () => undefined,
      attempts: () => undefined,
      publish: () => undefined,
      phase: () => undefined,
      effects: () => undefined,
    },
    end: {
      stop: (reason) => end(reason),
      finish: () => end('success'),
      // The chain goes on in place with what the workflow would carry into its next run.
      continueAsNew: async () => {
        carryInPlace(state, 0);
        return undefined;
      },
    },
  };
  return runLoop(ports);
}

/**
 * The promise, computed from the events alone: the stop reason, and the tool calls that really run.
 * `compacted`: the context budget is so small that the model sees every result but the latest
 * compacted; a read whose result it saw compacted is then read again as a new call, not a repeat.
 */
function expected(events: readonly Event[], bound: number, compacted = false): { stop: string; executed: number } {
  const reads = new Map<string, number>();
  const writes = new Set<number>();
  let executed = 0;
  // The read whose result is the latest in the history (shown whole); undefined: another call's is.
  let latest: string | undefined;
  for (const event of events) {
    if (event.kind === 'customer') {
      // A customer message is news for reads and writes alike (a consenting yes is not).
      reads.clear();
      writes.clear();
      continue;
    }
    if (event.kind === 'write') {
      if (writes.has(event.order)) return { stop: 'loop_detected', executed };
      writes.add(event.order);
      executed++;
      reads.clear();
      latest = undefined;
      continue;
    }
    const key = event.kind === 'read' ? `o${event.order}` : `p${event.product}`;
    if (compacted) for (const seen of [...reads.keys()]) if (seen !== latest) reads.delete(seen);
    latest = key;
    const before = reads.get(key) ?? 0;
    if (before > bound) return { stop: 'loop_detected', executed };
    if (before === 0) executed++;
    reads.set(key, before + 1);
  }
  return { stop: 'success', executed };
}

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 1, max: 2 }).map((order) => ({ kind: 'read' as const, order })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 2 }).map((product) => ({ kind: 'product' as const, product })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 6 }).map((order) => ({ kind: 'write' as const, order })) },
  { weight: 2, arbitrary: fc.constant({ kind: 'customer' as const }) },
);

describe('repeated reads: answered from memory up to max_repeats, then loop_detected', () => {
  it('the same read again with nothing new: the earlier result, marked, the tool not called', async () => {
    const read: Event = { kind: 'read', order: 1 };
    const out = await run([read, read]);
    assert.equal(out.stop, 'success');
    assert.deepEqual(out.executed, ['get_order_details'], 'the repeat did not run the tool');
    const [first, again] = out.history;
    assert.equal(again!.observation.repeat?.of_step, first!.step);
    assert.match(again!.observation.repeat!.note, /already made this exact call at step 1/);
    assert.deepEqual(again!.observation.data, first!.observation.data);
    assert.equal(out.trace[1]!.repeat_of, 1);
  });

  it('re-reads after a customer message and after a write are ordinary calls', async () => {
    const read: Event = { kind: 'read', order: 1 };
    const events: Event[] = [read, { kind: 'customer' }, read, { kind: 'write', order: 1 }, read, read, read];
    const out = await run(events, { maxRepeats: 2 });
    assert.equal(out.stop, 'success');
    assert.equal(out.executed.filter((t) => t === 'get_order_details').length, 3);
  });

  it(`past the bound (default ${DEFAULT_MAX_REPEATS}) the run ends loop_detected`, async () => {
    const read: Event = { kind: 'read', order: 1 };
    const forever = Array.from({ length: 10 }, () => read);
    const out = await run(forever);
    assert.equal(out.stop, 'loop_detected');
    assert.equal(out.executed.length, 1);
    assert.equal(out.trace.at(-1)!.stop_reason, 'loop_detected');
    assert.equal(out.trace.length, DEFAULT_MAX_REPEATS + 2);
    assert.equal((await run(forever, { maxRepeats: 0 })).trace.length, 2, 'max_repeats 0: the first repeat ends it');
  });

  it('a write made again with no customer message since (its yes aside): loop_detected, not re-run', async () => {
    const write: Event = { kind: 'write', order: 3 };
    const out = await run([write, { kind: 'read', order: 3 }, write]);
    assert.equal(out.stop, 'loop_detected');
    assert.equal(out.executed.filter((t) => t === 'cancel_pending_order').length, 1);
  });

  it('a write made again after a customer message is their request: made again', async () => {
    const write: Event = { kind: 'write', order: 3 };
    const out = await run([write, { kind: 'customer' }, { kind: 'read', order: 3 }, write]);
    assert.equal(out.stop, 'success');
    assert.equal(out.executed.filter((t) => t === 'cancel_pending_order').length, 2);
  });

  it('property: loop_detected iff a read repeats past the bound, or a write repeats, with nothing new in between; repeats run no tool', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(eventArb, { maxLength: 24 }), fc.integer({ min: 0, max: 3 }), async (events, bound) => {
        const want = expected(events, bound);
        const out = await run(events, { maxRepeats: bound });
        assert.equal(out.stop, want.stop);
        assert.equal(out.executed.length, want.executed);
      }),
      { numRuns: 300 },
    );
  });

  it('a read made again because its result was compacted runs the tool again, never loop_detected (adversary finding 8)', async () => {
    // The adversary's run: two reads in turn under a small context budget; each time the model
    // reads the compaction note of the other one and calls it again with the same arguments.
    const alternate: Event[] = Array.from({ length: 10 }, (_, i) => ({ kind: 'read', order: (i % 2) + 1 }));
    const out = await run(alternate, { contextTokens: 2_000 });
    assert.equal(out.stop, 'success');
    assert.equal(out.executed.length, 10, 'every re-read of a compacted result ran the tool');
    assert.ok(out.trace.every((t) => t.repeat_of === undefined));
    // Its latest result shown whole, the same read again is still a repeat, and bounded as one.
    const same = await run(
      Array.from({ length: 10 }, (): Event => ({ kind: 'read', order: 1 })),
      {
        contextTokens: 2_000,
      },
    );
    assert.equal(same.stop, 'loop_detected');
    assert.equal(same.executed.length, 1);
  });

  it('property: under a context budget that compacts all but the latest result, only a read of the latest result repeats', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(eventArb, { maxLength: 24 }), fc.integer({ min: 0, max: 3 }), async (events, bound) => {
        const want = expected(events, bound, true);
        const out = await run(events, { maxRepeats: bound, contextTokens: 2_000 });
        assert.equal(out.stop, want.stop);
        assert.equal(out.executed.length, want.executed);
      }),
      { numRuns: 200 },
    );
  });

  it('property: the same holds across continue-as-new (the reads of the scope and seen_since are carried)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { maxLength: 24 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        async (events, bound, every) => {
          const out = await run(events, { maxRepeats: bound, every });
          assert.equal(out.stop, expected(events, bound).stop);
        },
      ),
      { numRuns: 200 },
    );
  });
});
