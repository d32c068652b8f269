// The pieces of `--mode live-scripted`, without a server: the identifier check (an identifier the run
// showed the model and the request making the call lacks is reported, one never shown or present is
// not), the scripted ground-truth model's position in native tool-call form, τ²'s user simulator
// scripted (opening, consent, ###STOP###), the cached-token estimate, and the transcript (order,
// redaction of sensitive fields).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { AgentResult } from '../../common/types';
import { identifiersOf, mentions, missingIdentifiers } from '../../eval/tau2/id-check';
import type { DecisionRecord } from '../../eval/tau2/id-check';
import { ANYTHING_ELSE, customerReply, liveReplay, STOP_MARK, usageOf } from '../../eval/tau2/live-replay';
import { nativeMove } from '../../eval/tau2/replay-model';
import { planReplay } from '../../eval/tau2/replay-plan';
import { loadTasks, reasonForCall } from '../../eval/tau2/task';
import { transcriptOf } from '../../eval/harness/transcript';
import type { RecordedRequest } from '../../offline-model/scripted-llm-server';
import { REPO_ROOT } from '../helpers/harness';

const tasks = loadTasks(path.join(REPO_ROOT, 'domains', 'retail', 'data', 'tasks-train.json'));

describe('identifier check', () => {
  it('takes the identifiers among a call’s arguments, lists included, and nothing else', () => {
    assert.deepEqual(
      identifiersOf({
        order_id: '#W1',
        item_ids: ['222', '111'],
        payment_method_id: 'credit_card_9',
        address1: '760 Elm Avenue',
        reason: 'no longer needed',
      }),
      [
        { arg: 'order_id', id: '#W1' },
        { arg: 'item_ids', id: '111' },
        { arg: 'item_ids', id: '222' },
        { arg: 'payment_method_id', id: 'credit_card_9' },
      ],
    );
  });

  it('finds an identifier only as a whole token', () => {
    assert.equal(mentions('{"item_id":"1234567890"}', '1234567890'), true);
    assert.equal(mentions('"11234567890"', '1234567890'), false);
    assert.equal(mentions('credit_card_12', 'credit_card_1'), false);
    assert.equal(mentions('"#W123", "#W1"', '#W1'), true);
  });

  it('reports an identifier shown earlier and missing at the call, not one never shown or still present', () => {
    const decisions: DecisionRecord[] = [
      { text: 'the customer said order #W1 and card paypal_7' },
      { text: 'the last three results: #W2', call: { name: 'get_order_details', args: { order_id: '#W2' } } },
      {
        text: 'only #W2 here',
        call: { name: 'cancel', args: { order_id: '#W1', payment_method_id: 'gift_card_3', user_id: 'x_y_1' } },
      },
    ];
    assert.deepEqual(missingIdentifiers(decisions), [{ request: 2, tool: 'cancel', arg: 'order_id', id: '#W1' }]);
  });

  it('property: a miss is exactly an identifier in an earlier request and absent from the call’s', () => {
    const id = fc.constantFrom('#W1', '#W2', '3333', 'paypal_4');
    fc.assert(
      fc.property(
        fc.array(fc.record({ shown: fc.uniqueArray(id), call: fc.option(fc.uniqueArray(id, { minLength: 1 })) }), {
          maxLength: 8,
        }),
        (runs) => {
          const decisions: DecisionRecord[] = runs.map((r) => ({
            text: r.shown.join(' '),
            ...(r.call ? { call: { name: 't', args: { item_ids: r.call } } } : {}),
          }));
          const expected = runs.flatMap((r, i) =>
            (r.call ?? [])
              .filter((x) => !r.shown.includes(x) && runs.slice(0, i).some((e) => e.shown.includes(x)))
              .sort()
              .map((x) => ({ request: i, tool: 't', arg: 'item_ids', id: x })),
          );
          assert.deepEqual(missingIdentifiers(decisions), expected);
        },
      ),
    );
  });
});

describe('the scripted ground truth in native tool-call form', () => {
  const task = tasks.find((t) => planReplay(t).calls.length >= 3)!;
  const plan = planReplay(task);
  const assistantCall = (name: string, args: unknown) => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c', type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  });

  it('answers the next call after the calls the conversation shows, and notices a run off its plan', () => {
    const [first, second] = plan.calls;
    assert.deepEqual(nativeMove(plan, [{ role: 'system', content: 's' }]), { call: first });
    assert.deepEqual(nativeMove(plan, [assistantCall(first!.name, first!.args), { role: 'tool', content: '{}' }]), {
      call: second,
    });
    assert.ok('off' in nativeMove(plan, [assistantCall('get_user_details', { user_id: 'someone_else_1' })]));
    const all = plan.calls.map((c) => assistantCall(c.name, c.args));
    assert.deepEqual(nativeMove(plan, all), { final: true });
  });

  it('replies with tool_calls when the request offers tools, asks for anything else once, then answers final', () => {
    const replay = liveReplay(task, plan);
    const request = (messages: unknown[], step: number): RecordedRequest => ({
      id: step,
      path: '/v1/chat/completions',
      method: 'POST',
      headers: {},
      body: { tools: [{ type: 'function' }], parallel_tool_calls: false, messages },
      idempotencyKey: `wf:decide:${step}`,
      workflowId: 'wf',
      receivedAt: 0,
      aborted: false,
    });
    const first = replay.script(request([{ role: 'user', content: 'hi' }], 1));
    assert.ok(!(first instanceof Promise) && 'toolCalls' in first);
    assert.deepEqual(first.toolCalls, [{ name: plan.calls[0]!.name, arguments: JSON.stringify(plan.calls[0]!.args) }]);
    const done = plan.calls.map((c) => assistantCall(c.name, c.args));
    const asks = replay.script(request(done, 2));
    assert.ok(!(asks instanceof Promise) && 'content' in asks && asks.content === ANYTHING_ELSE);
    const ended = replay.script(request([...done, { role: 'assistant', content: ANYTHING_ELSE }], 3));
    assert.ok(!(ended instanceof Promise) && 'toolCalls' in ended && ended.toolCalls[0]!.name === 'final_answer');
    assert.equal(replay.nativeRequests, replay.decisions.length);
    assert.deepEqual(replay.decisions[0]!.call, { name: plan.calls[0]!.name, args: plan.calls[0]!.args });
  });

  it('plays τ²’s user simulator: the reason for calling first, yes to a consent question, ###STOP### at the end', () => {
    const opening = customerReply(task, [
      { role: 'system', content: 'instructions' },
      { role: 'user', content: 'Hello! How can I help you today?' },
    ]);
    assert.ok(opening.startsWith(reasonForCall(task)));
    const asked = (text: string) => [
      { role: 'user', content: 'Hello!' },
      { role: 'assistant', content: opening },
      { role: 'user', content: text },
    ];
    assert.equal(customerReply(task, asked('Cancel?\n(The agent asks you to confirm: cancel {})')), 'yes');
    assert.equal(customerReply(task, asked(ANYTHING_ELSE)), STOP_MARK);
  });

  it('estimates cached tokens as a prefix cache would: the shared prefix, from 1024 tokens, in blocks of 128', () => {
    const stable = 'x'.repeat(3 * 2000);
    assert.equal(usageOf(`${stable}a`, '').prompt_tokens_details.cached_tokens, 0);
    assert.equal(usageOf(`${stable}a`, `${stable}b`).prompt_tokens_details.cached_tokens, 1920);
    assert.equal(usageOf('x'.repeat(3000), 'x'.repeat(3000)).prompt_tokens_details.cached_tokens, 0);
  });
});

describe('transcript', () => {
  it('orders turns and calls as they happened, consent before the write’s result, with sensitive fields redacted', () => {
    const result = {
      conversation: {
        total: 5,
        agent_messages: 2,
        customer_messages: 3,
        turns: [
          { n: 1, from: 'customer' as const, text: 'cancel #W1', step: 0 },
          {
            n: 2,
            from: 'agent' as const,
            text: 'Confirm?',
            step: 2,
            consent: { tool: 'cancel', args: { order_id: '#W1' }, args_hash: 'h' },
          },
          { n: 3, from: 'customer' as const, text: 'yes', step: 2 },
          { n: 4, from: 'agent' as const, text: 'Done. Anything else?', step: 3 },
          { n: 5, from: 'customer' as const, text: '', step: 3, end: true as const },
        ],
      },
      history: [
        {
          step: 1,
          action: { kind: 'tool', name: 'get_user_details', args: { user_id: 'a' } },
          observation: {
            tool: 'get_user_details',
            ok: true,
            data: { user_id: 'a', payment: { card: '4111' } },
            source: 'retail',
            bytes: 10,
            truncated: false,
            sensitive: ['payment.card'],
          },
        },
        {
          step: 2,
          action: { kind: 'tool', name: 'cancel', args: { order_id: '#W1' } },
          observation: {
            tool: 'cancel',
            ok: true,
            data: { status: 'cancelled' },
            source: 'retail',
            bytes: 5,
            truncated: false,
          },
        },
        { step: 3, action: { kind: 'message', text: 'Done. Anything else?' }, observation: {} },
      ],
    } as unknown as Pick<AgentResult, 'history' | 'conversation'>;
    const entries = transcriptOf(result);
    assert.deepEqual(
      entries.map((e) => ('n' in e ? `turn ${e.n}` : `step ${e.step}`)),
      ['turn 1', 'step 1', 'turn 2', 'turn 3', 'step 2', 'turn 4', 'turn 5'],
    );
    const read = entries[1] as { result: string };
    assert.ok(!read.result.includes('4111'), read.result);
  });
});
