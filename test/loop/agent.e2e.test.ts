// End to end through the real `openai` client, a real worker process and the real dev server:
// the refund scenario, and every stop reason reached by a run that reaches it for real.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { billing, final, malformed, policy, profile, tool, toolCalls } from '../../offline-model/scripted-replies';
import type { TemporalEnv } from '../../runtime/temporal-env';
import type { AgentInput } from '../../common/types';
import { agentFixture } from '../helpers/agent-fixture';
import { agentInput, REFUND_SCENARIO_ROWS, traceRows } from '../helpers/harness';
import type { WorkerProcess } from '../../local-servers/worker-process';

// A second worker whose LLM times out after 1 s and whose tool data source is down.
let brokenEnv: TemporalEnv;
let brokenWorker: WorkerProcess;
// A worker for servers without tool calling: the JSON-object contract.
let jsonEnv: TemporalEnv;

const fixture = agentFixture({
  queue: 'e2e',
  workerEnv: { OPENAI_TIMEOUT_SECONDS: '30' },
  setup: async () => {
    brokenEnv = fixture.queue('e2e-broken');
    brokenWorker = fixture.startWorker(
      { OPENAI_TIMEOUT_SECONDS: '1', AGENT_DATA_FILE: '/nonexistent/support-data.json' },
      brokenEnv,
    );
    jsonEnv = fixture.queue('e2e-json');
    const jsonWorker = fixture.startWorker({ OPENAI_TIMEOUT_SECONDS: '30', AGENT_LLM_TOOL_MODE: 'json' }, jsonEnv);
    await Promise.all([brokenWorker.ready, jsonWorker.ready]);
  },
});
const run = (replies: Reply[], overrides: Partial<AgentInput> = {}, on?: TemporalEnv) =>
  fixture.run(replies, overrides, { on });

describe('the refund scenario', () => {
  it('succeeds after three tool calls, with observations fed back to the model', async () => {
    const { id, result, requests, handle } = await run([
      profile(),
      billing(),
      policy(),
      final('Yes: USD 49.00, within 14 days.'),
    ]);
    assert.equal(result.status, 'ok');
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.answer, 'Yes: USD 49.00, within 14 days.');
    assert.deepEqual(traceRows(result), REFUND_SCENARIO_ROWS);
    assert.equal(result.trace[0]!.args_hash, 'feaa769a39ae');
    assert.deepEqual(result.history[1]!.observation.data, {
      billing: { currency: 'USD', plan: 'pro_monthly', price_usd: 49, days_since_first_payment: 10 },
    });
    assert.equal(result.history[1]!.observation.source, 'billing-service');
    assert.equal(result.usage.tool_calls, 3);
    assert.equal(result.usage.llm_calls, 4);
    assert.equal(result.usage.total_tokens, 4 * 120);

    // What the model was sent: one request per step, each with its own stable key.
    assert.deepEqual(
      requests.map((r) => r.idempotencyKey),
      [1, 2, 3, 4].map((s) => `${id}:${handle.firstExecutionRunId}:decide:${s}`),
    );
    // Native tool calling: the tools as functions, one call per answer, the whole run as chat messages.
    const last = requests[3]!.body;
    assert.equal(last.response_format, undefined);
    assert.equal(last.parallel_tool_calls, false);
    assert.deepEqual(
      last.tools.map((t: { function: { name: string } }) => t.function.name),
      ['get_user_profile', 'get_user_billing', 'search_policy', 'final_answer', 'escalate'],
    );
    assert.equal(last.messages[0].role, 'system');
    assert.equal(JSON.parse(last.messages[1].content).goal, agentInput().goal);
    // Every earlier step's call and result, in order, the call ids matching.
    const calls = ['get_user_profile', 'get_user_billing', 'search_policy'];
    assert.deepEqual(
      last.messages.slice(2).map((m: { role: string }) => m.role),
      calls.flatMap(() => ['assistant', 'tool']),
    );
    calls.forEach((name, i) => {
      const call = last.messages[2 + 2 * i];
      const result = last.messages[3 + 2 * i];
      assert.equal(call.tool_calls.length, 1);
      assert.equal(call.tool_calls[0].id, `call_${i + 1}`);
      assert.equal(call.tool_calls[0].function.name, name);
      assert.equal(result.tool_call_id, `call_${i + 1}`);
      const observation = JSON.parse(result.content);
      assert.equal(observation.tool, name);
      assert.equal(observation.trust, 'untrusted');
    });
    assert.equal(JSON.parse(last.messages[5].content).data.billing.price_usd, 49);
    // Step N's request holds step N-1's whole request as its prefix (a provider's prefix cache applies).
    for (let n = 1; n < requests.length; n++) {
      const before = requests[n - 1]!.body;
      const now = requests[n]!.body;
      assert.equal(JSON.stringify(now.tools), JSON.stringify(before.tools));
      assert.deepEqual(now.messages.slice(0, before.messages.length), before.messages);
    }
    assert.equal(requests[0]!.headers.authorization, 'Bearer test-key');
  });
});

describe('budgets', { concurrency: true }, () => {
  it('max_steps: the model keeps calling tools', async () => {
    const { result } = await run([profile(), billing(), policy()], { budget: { max_steps: 2 } });
    assert.equal(result.stop_reason, 'max_steps');
    assert.equal(result.status, 'stopped');
    assert.equal(result.trace.length, 2);
    assert.equal(result.usage.steps, 2);
  });

  it('max_tool_calls: the second call is refused and not executed', async () => {
    const { result } = await run([profile(), billing()], { budget: { max_tool_calls: 1 } });
    assert.equal(result.stop_reason, 'max_tool_calls');
    assert.equal(result.history.length, 1);
    assert.deepEqual(
      result.trace.map((t) => [t.tool, t.ok, t.stop_reason]),
      [
        ['get_user_profile', true, undefined],
        ['get_user_billing', false, 'max_tool_calls'],
      ],
    );
  });

  it('max_tokens: token usage crosses the budget', async () => {
    const { result, requests } = await run([profile(), billing(), policy()], { budget: { max_tokens: 200 } });
    assert.equal(result.stop_reason, 'max_tokens');
    assert.equal(requests.length, 2); // 120 + 120 >= 200: no third decision
    assert.equal(result.usage.total_tokens, 240);
  });

  it('max_seconds: a slow LLM call is cut off at the deadline, not after it returns', async () => {
    const { result, ms, requests } = await run([profile(), { hang: true }], { budget: { max_seconds: 3 } });
    assert.equal(result.stop_reason, 'max_seconds');
    assert.equal(result.trace.length, 1);
    // The hanging call never returns: only the workflow timer can have ended this run. The upper
    // bound is loose because CI machines are noisy; `npm run bench` measures the real latency.
    assert.ok(ms >= 2_500 && ms < 8_000, `run took ${ms} ms for a 3 s budget`);
    const slow = requests[1]!;
    await fixture.llm.waitForAbort((r) => r.id === slow.id, 5_000);
    assert.equal(slow.aborted, true, 'the hanging LLM request was aborted');
  });
});

describe('the gateway stops the run', { concurrency: true }, () => {
  it('loop_detected: the same tool with the same args, repeated past max_repeats (2) with nothing new', async () => {
    const { result } = await run([policy('refund'), policy('refund'), policy('refund'), policy('refund')]);
    assert.equal(result.stop_reason, 'loop_detected');
    // The two repeats were answered from step 1's observation, the tool not called again.
    assert.deepEqual(
      result.history.map((h) => h.observation.repeat?.of_step),
      [undefined, 1, 1],
    );
  });

  it('loop_detected after normalisation: surrounding whitespace does not make a new call', async () => {
    const { result } = await run([policy('refund'), policy('  refund ')], { budget: { max_repeats: 0 } });
    assert.equal(result.stop_reason, 'loop_detected');
  });

  it('tool_denied: a registered tool outside the allowlist', async () => {
    const { result } = await run([policy()], { allow: ['get_user_profile'] });
    assert.equal(result.stop_reason, 'tool_denied:search_policy');
    assert.equal(result.history.length, 0);
    assert.deepEqual(result.trace, [
      {
        step: 1,
        tool: 'search_policy',
        args_hash: result.trace[0]!.args_hash,
        ok: false,
        stop_reason: 'tool_denied:search_policy',
      },
    ]);
  });

  // tool_missing (an allowed name no tool implements) cannot happen to a run:
  // its input is refused at entry (fault-guarantees.e2e.test.ts); the gateway's check stays for
  // histories recorded before, and is unit-tested in gateway.test.ts.

  it('tool_bad_args: arguments that fail the tool schema', async () => {
    const { result } = await run([tool('get_user_profile', { user_id: '42; DROP TABLE' })]);
    assert.equal(result.stop_reason, 'tool_bad_args:get_user_profile');
    assert.equal(result.history.length, 0);
  });

  it('tool_error: the tool fails on every attempt (its data source is down)', async () => {
    const { result } = await run([profile()], {}, brokenEnv);
    assert.equal(result.stop_reason, 'tool_error:get_user_profile');
    assert.deepEqual(
      result.trace.map((t) => [t.tool, t.ok]),
      [['get_user_profile', false]],
    );
  });
});

describe('malformed model output', { concurrency: true }, () => {
  const cases: Array<[string, string]> = [
    ['bad_json', 'Sure! I will call the billing tool now.'],
    ['not_object', '["get_user_profile", 42]'],
    ['bad_kind', '{"kind":"shell","command":"cat /etc/passwd"}'],
    ['extra_keys', '{"kind":"final","answer":"Yes","confidence":0.99}'],
    ['missing_answer', '{"kind":"final","answer":""}'],
    ['missing_tool_name', '{"kind":"tool","args":{"user_id":42}}'],
    ['bad_args', '{"kind":"tool","name":"get_user_profile","args":"user 42"}'],
  ];
  for (const [reason, content] of cases) {
    it(`invalid_action:${reason} (AGENT_LLM_TOOL_MODE=json)`, async () => {
      const { result, requests } = await run([malformed(content)], {}, jsonEnv);
      assert.deepEqual(requests[0]!.body.response_format, { type: 'json_object' });
      assert.equal(requests[0]!.body.tools, undefined);
      assert.equal(result.stop_reason, `invalid_action:${reason}`);
      assert.equal(result.status, 'stopped');
      assert.ok(result.raw_action !== undefined, 'the raw action is kept for debugging');
      assert.equal(result.history.length, 0);
    });
  }
});

describe('malformed tool calls (native tool calling)', { concurrency: true }, () => {
  const cases: Array<[string, Array<[string, string]>]> = [
    ['bad_args', [['get_user_profile', 'user 42']]],
    ['bad_args', [['get_user_profile', '[42]']]],
    ['missing_tool_name', [['', '{"user_id":42}']]],
    ['missing_answer', [['final_answer', '{}']]],
    ['missing_answer', [['final_answer', 'not json']]],
    ['extra_keys', [['final_answer', '{"answer":"Yes","confidence":0.99}']]],
    ['missing_reason', [['escalate', '{"reason":"  "}']]],
  ];
  for (const [reason, calls] of cases) {
    it(`invalid_action:${reason} from ${JSON.stringify(calls)}`, async () => {
      const { result } = await run([toolCalls(calls)]);
      assert.equal(result.stop_reason, `invalid_action:${reason}`);
      assert.equal(result.status, 'stopped');
      assert.equal(result.history.length, 0);
    });
  }

  it('a tool the run does not allow is refused by the gateway, as in json mode', async () => {
    const { result } = await run([toolCalls([['issue_refund', '{"user_id":42,"amount_usd":49,"reason":"x"}']])]);
    assert.equal(result.stop_reason, 'tool_denied:issue_refund');
  });
});

describe('LLM failures', { concurrency: true }, () => {
  it('llm_error: a 401 is not retried', async () => {
    const { result, requests } = await run([{ status: 401 }, final('never reached')]);
    assert.equal(result.stop_reason, 'llm_error');
    assert.equal(requests.length, 1);
  });

  it('a 429 is retried after its Retry-After, with the same Idempotency-Key', async () => {
    const { result, requests } = await run([{ status: 429, headers: { 'retry-after': '3' } }, final('ok')]);
    assert.equal(result.stop_reason, 'success');
    assert.equal(requests.length, 2);
    assert.equal(requests[0]!.idempotencyKey, requests[1]!.idempotencyKey);
    const gap = requests[1]!.receivedAt - requests[0]!.receivedAt;
    assert.ok(gap >= 2_800, `retried after ${gap} ms, Retry-After said 3 s`);
  });

  it('a 429 with Retry-After: 0 is still retried (by the policy backoff)', async () => {
    const { result, requests } = await run([{ status: 429, headers: { 'retry-after': '0' } }, final('ok')]);
    assert.equal(result.stop_reason, 'success');
    assert.equal(requests.length, 2);
  });

  it('llm_error: 5xx answers until the attempts run out', async () => {
    const { result, requests } = await run([{ status: 503 }, { status: 500 }], { llm_max_attempts: 2 });
    assert.equal(result.stop_reason, 'llm_error');
    assert.equal(requests.length, 2);
  });

  it('llm_timeout: an LLM that never answers, after a bounded number of attempts', async () => {
    const { result, requests } = await run([{ hang: true }, { hang: true }], { llm_max_attempts: 2 }, brokenEnv);
    assert.equal(result.stop_reason, 'llm_timeout');
    assert.equal(requests.length, 2);
    assert.ok(
      requests.every((r) => r.aborted),
      'each attempt was abandoned by the client at its timeout',
    );
  });
});
