// The model's view through a real worker, the real `openai` client and the dev server: a long run's
// request at its last step holds every call and result, while each decide activity's input in the
// history stays the same size (the view is rendered from a Query, never stored again per step);
// past the context budget the oldest results are compacted, and the Web UI's summary says so.
import { describe, it } from 'node:test';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import assert from 'node:assert/strict';
import type { temporal } from '@temporalio/proto';
import { byStep, final, message, tool } from '../../offline-model/scripted-replies';
import { runResult, runState } from '../../client/agent-client';
import { temporal as proto } from '@temporalio/proto';
import { eventually } from '../helpers/harness';
import type { StepReply } from '../../offline-model/scripted-replies';
import { requestView } from '../../offline-model/request-view';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { sayUpdate } from '../../common/agent-messages';

const historyEvent = proto.api.history.v1.HistoryEvent;
const RETAIL_DB = path.join(mkdtempSync(path.join(os.tmpdir(), 'model-view-e2e-')), 'retail.sqlite');
const fixture = agentFixture({
  queue: 'model-view',
  workerEnv: { OPENAI_TIMEOUT_SECONDS: '30', AGENT_RETAIL_DB: RETAIL_DB },
});
// From τ²-bench's retail database: a customer and their order.
const IVAN = { user_id: 'ivan_santos_6635', email: 'ivan.santos3158@example.com', order: '#W8770097' };

/** A run of `steps` policy searches (each its own query, so no loop), then a final answer. */
function searches(steps: number): Record<number, StepReply> {
  const replies: Record<number, StepReply> = {};
  for (let s = 1; s <= steps; s++) replies[s] = tool('search_policy', { query: `refund rule number ${s}` });
  replies[steps + 1] = final('Done.');
  return replies;
}

/** The decide activities' scheduled events: their input's bytes and their Web UI summary, by step. */
function decides(
  events: temporal.api.history.v1.IHistoryEvent[],
): Array<{ bytes: number; summary: string; input: string }> {
  return events
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'decide')
    .map((e) => {
      const payload = e.activityTaskScheduledEventAttributes!.input!.payloads![0]!;
      const summary = e.userMetadata?.summary?.data;
      return {
        bytes: payload.data!.length,
        input: Buffer.from(payload.data!).toString('utf8'),
        summary: summary ? (JSON.parse(Buffer.from(summary).toString('utf8')) as string) : '',
      };
    });
}

/** A request's estimated tokens as the run's budget counts them: its messages and tools as sent, 3 characters a token. */
function requestTokens(body: { messages?: unknown; tools?: unknown }): number {
  return Math.ceil((JSON.stringify(body.messages).length + (body.tools ? JSON.stringify(body.tools).length : 0)) / 3);
}

/** Room for the support domain's system prompt, tools and a few results, not for ten. */
const FITTING_BUDGET = 2_000;

describe("the model's view of a long run", { concurrency: true }, () => {
  it('step 41 reads all 40 calls and results; every decide input in the history is the same size', async () => {
    const steps = 40;
    const { result, requests, handle } = await fixture.run(byStep(searches(steps)), {
      // A shared, loaded machine takes its time over 41 decisions: time is not what this measures.
      budget: { max_steps: steps + 5, max_tool_calls: steps + 5, max_seconds: 1800 },
    });
    assert.equal(result.stop_reason, 'success');
    const last = requestView(requests.at(-1)!.body)!;
    assert.deepEqual(
      last.steps.map((s) => [s.step, s.action.name, (s.action.args as { query: string }).query]),
      Array.from({ length: steps }, (_, i) => [i + 1, 'search_policy', `refund rule number ${i + 1}`]),
    );
    assert.ok(last.steps.every((s) => s.observation.ok === true && s.observation.trust === 'untrusted'));

    const events = (await handle.fetchHistory()).events ?? [];
    const inputs = decides(events);
    assert.equal(inputs.length, steps + 1);
    // History bytes per step (decide to decide), early and late: the figure docs/benchmark.md quotes.
    let bytes = 0;
    const atDecide: number[] = [];
    for (const e of events) {
      bytes += historyEvent.encode(e).finish().length;
      if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'decide') atDecide.push(bytes);
    }
    const early = atDecide[10]! - atDecide[9]!;
    const late = atDecide[steps]! - atDecide[steps - 1]!;
    assert.ok(late < early * 1.25, `history bytes per step: ${early} at step 10, ${late} at step ${steps}`);
    console.log(`history per step: ${early} B at step 10, ${late} B at step ${steps}`);
    // Flat: step 41's input is step 10's within the digits of larger numbers (a linear history).
    const grew = inputs[steps]!.bytes - inputs[9]!.bytes;
    assert.ok(grew < 64, `decide input grew by ${grew} bytes from step 10 to step ${steps + 1}`);
    // No observation is stored again in a decide input.
    assert.ok(!inputs.some((i) => i.input.includes('refund rule number')), 'a call or result in a decide input');
  });

  it('past the context budget the oldest results are compacted, said in the summary, the newest kept', async () => {
    const steps = 12;
    const { id, result, requests, handle } = await fixture.run(byStep(searches(steps)), {
      budget: { max_steps: steps + 5, max_tool_calls: steps + 5 },
      context_tokens: 2_000,
    });
    assert.equal(result.stop_reason, 'success');
    const last = requestView(requests.at(-1)!.body)!;
    assert.equal(last.steps.length, steps, 'every call is still there');
    const compacted = last.steps.filter((s) => s.observation.compacted === true);
    assert.ok(compacted.length > 0, 'some results compacted');
    assert.deepEqual(
      compacted.map((s) => s.step),
      Array.from({ length: compacted.length }, (_, i) => i + 1),
      'the oldest ones',
    );
    assert.match(String(compacted[0]!.observation.note), /call search_policy again with the same arguments/);
    assert.equal(last.steps.at(-1)!.observation.compacted, undefined, 'the newest result is whole');
    const summaries = decides((await handle.fetchHistory()).events ?? []).map((d) => d.summary);
    assert.match(summaries.at(-1)!, new RegExp(`decide · ${compacted.length} oldest tool results compacted`));
    assert.doesNotMatch(summaries[0]!, /compacted/);
    // `agent trace` says it too, at the decision it shaped.
    const trace = await runCli(fixture.env, ['trace', id]);
    assert.equal(trace.code, 0, trace.stderr);
    assert.match(trace.stdout, new RegExp(`\\(${compacted.length} results compacted\\)`));
  });

  it('the context budget counts the system prompt and the tools: a request over it is one the summary says is over (adversary finding 8)', async () => {
    const steps = 10;
    const budget = FITTING_BUDGET;
    const { result, requests, handle } = await fixture.run(byStep(searches(steps)), {
      budget: { max_steps: steps + 5, max_tool_calls: steps + 5 },
      context_tokens: budget,
    });
    assert.equal(result.stop_reason, 'success');
    const sizes = requests.map((r) => requestTokens(r.body));
    const summaries = decides((await handle.fetchHistory()).events ?? []).map((d) => d.summary);
    console.log(`request tokens (estimated) at a budget of ${budget}: ${sizes.join(', ')}`);
    // From the second decision on, the run knows the system prompt's and the tools' size (the first
    // planned before any request measured them, and had no result to compact).
    for (let i = 1; i < sizes.length; i++) {
      const over = /view ~(\d+) tokens, over its context budget/.exec(summaries[i]!);
      if (sizes[i]! <= budget) assert.equal(over, null, `request ${i + 1} fits, yet: ${summaries[i]}`);
      else assert.equal(Number(over?.[1]), sizes[i], `request ${i + 1}: ${sizes[i]} tokens, summary: ${summaries[i]}`);
    }
    // The budget kept a request in by compacting, before compacted notes alone outgrew it.
    const kept = requests.findIndex(
      (r, i) => sizes[i]! <= budget && requestView(r.body)!.steps.some((s) => s.observation.compacted),
    );
    assert.ok(kept > 0, sizes.join(', '));
  });

  it('reading again a result the model saw compacted is a new call that runs the tool, not a repeat (adversary finding 8)', async () => {
    // Six searches in turn, four times: each one again after its result was compacted, with the
    // same arguments, as the note says. As repeats, the fourth round would end loop_detected.
    const queries = ['refund window', 'billing cycle', 'late fee', 'annual plan', 'proration', 'chargeback'];
    const steps = 4 * queries.length;
    const replies: Record<number, StepReply> = {};
    for (let s = 1; s <= steps; s++) replies[s] = tool('search_policy', { query: queries[(s - 1) % queries.length]! });
    replies[steps + 1] = final('Done.');
    const { result, requests } = await fixture.run(byStep(replies), {
      budget: { max_steps: steps + 5, max_tool_calls: steps + 5, max_seconds: 600 },
      context_tokens: FITTING_BUDGET,
    });
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.usage.tool_calls, steps, 'every call ran the tool');
    assert.ok(
      result.trace.every((t) => t.repeat_of === undefined),
      'no call was answered as a repeat',
    );
    // Each query's call again came after its earlier result was compacted in the model's view.
    const seventh = requestView(requests[queries.length]!.body)!;
    assert.equal(seventh.steps[0]!.observation.compacted, true);
  });

  it('a retail run whose system prompt alone is over the budget: the latest result stays whole and the summary says so (adversary finding 8)', async () => {
    const steps = 8;
    const reads = [
      tool('get_user_details', { user_id: IVAN.user_id }),
      tool('get_order_details', { order_id: IVAN.order }),
    ];
    // The customer authenticates first (that result is never compacted), then two reads in turn.
    const replies: Record<number, StepReply> = { 1: tool('find_user_id_by_email', { email: IVAN.email }) };
    for (let s = 2; s <= steps; s++) replies[s] = reads[s % 2]!;
    replies[steps + 1] = final('Done.');
    const { id, result, requests, handle } = await fixture.run(byStep(replies), {
      goal: 'Check the customer order.',
      domain: 'retail',
      principal: undefined,
      // The reads and the authentication (the writes need a conversation to ask consent in).
      allow: ['find_user_id_by_email', 'get_user_details', 'get_order_details'],
      budget: { max_steps: steps + 5, max_tool_calls: steps + 5, max_seconds: 600 },
      context_tokens: 2_000,
    });
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.usage.tool_calls, steps, 'every read of a compacted result ran the tool');
    for (const request of requests.slice(1)) {
      const view = requestView(request.body)!;
      assert.equal(view.steps.at(-1)!.observation.compacted, undefined, 'the latest result is whole');
      assert.equal(view.steps.at(-1)!.observation.ok, true);
      assert.ok(view.steps.slice(1, -1).every((s) => s.observation.compacted === true));
    }
    const summaries = decides((await handle.fetchHistory()).events ?? []).map((d) => d.summary);
    assert.match(summaries.at(-1)!, /view ~\d+ tokens, over its context budget of 2000/);
    const trace = await runCli(fixture.env, ['trace', id]);
    assert.equal(trace.code, 0, trace.stderr);
  });

  it('a 60-turn conversation: the model reads every turn; the history grows by the same bytes per turn at turn 60 as at 10', async () => {
    const exchanges = 30;
    const replies: Record<number, StepReply> = {};
    for (let s = 1; s <= exchanges; s++) replies[s] = message(`Agent message ${s}: what else can I do for you?`);
    replies[exchanges + 1] = final('Goodbye.');
    const { id, handle } = await fixture.start(byStep(replies), {
      conversation: {},
      budget: { max_steps: exchanges + 5, max_seconds: 1800 },
    });
    for (let s = 1; s <= exchanges; s++) {
      await eventually(`the agent's message ${s}`, async () => {
        const state = await runState(handle);
        const c = state.conversation;
        return state.phase === 'awaiting_customer' && c?.agent_messages === s && c.unanswered === 0 ? true : undefined;
      });
      await handle.executeUpdate(sayUpdate, { args: [{ text: `Customer message ${s}: one more question, please.` }] });
    }
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    const last = requestView(fixture.llm.requests(id).at(-1)!.body)!;
    assert.equal(last.turns.length, 2 * exchanges, 'every turn, the first ones too');
    assert.equal(last.turns[1]!.text, 'Customer message 1: one more question, please.');

    // History bytes from one decide to the next (one agent turn and one customer turn each).
    const events = (await handle.fetchHistory()).events ?? [];
    let bytes = 0;
    const atDecide: number[] = [];
    for (const e of events) {
      bytes += historyEvent.encode(e).finish().length;
      if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'decide') atDecide.push(bytes);
    }
    const perExchange = (k: number) => atDecide[k + 1]! - atDecide[k]!;
    const early = (perExchange(5) + perExchange(6)) / 2;
    const late = (perExchange(exchanges - 2) + perExchange(exchanges - 1)) / 2;
    assert.ok(late < early * 1.25, `bytes per exchange: ${early} at turn ~12, ${late} at turn ~58`);
    console.log(`history per turn: ${Math.round(early / 2)} B at turn ~12, ${Math.round(late / 2)} B at turn ~58`);
  });
});
