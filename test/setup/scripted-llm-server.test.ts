// Drives the scripted server with the real openai client over real HTTP, exactly as the
// decide activity will, so header/signal/error-class assumptions are checked here.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, {
  APIConnectionError,
  APIUserAbortError,
  APIConnectionTimeoutError,
  AuthenticationError,
  InternalServerError,
  RateLimitError,
} from 'openai';
import { ScriptedLlmServer, type RecordedRequest } from '../../offline-model/scripted-llm-server';
import { final } from '../../offline-model/scripted-replies';
import { refundDemoModel } from '../../offline-model/offline-model';

const SYSTEM_PROMPT = 'You are a ReAct decision engine. Return only one JSON object.';
const TOOLS = [
  { name: 'get_user_profile', description: 'Get user profile by user_id', args: { user_id: 'integer' } },
  { name: 'get_user_billing', description: 'Get billing info by user_id', args: { user_id: 'integer' } },
  { name: 'search_policy', description: 'Search refund and billing policy snippets', args: { query: 'string' } },
];

let server: ScriptedLlmServer;
let client: OpenAI;

before(async () => {
  server = await ScriptedLlmServer.start();
  client = new OpenAI({ apiKey: 'test-key', baseURL: server.baseUrl, maxRetries: 0 });
});
after(async () => {
  await server.close();
});

/** The same call shape as the decide activity. */
function decide(workflowId: string, step: number, payload: unknown = { goal: 'g' }, signal?: AbortSignal) {
  return client.chat.completions.create(
    {
      model: 'gpt-4.1-mini',
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: JSON.stringify(payload) },
      ],
    },
    { ...(signal ? { signal } : {}), headers: { 'Idempotency-Key': `${workflowId}:decide:${step}` } },
  );
}

describe('ScriptedLlmServer', () => {
  test('returns a scripted action the client parses, with usage', async () => {
    const action = { kind: 'tool', name: 'get_user_profile', args: { user_id: 42 } };
    server.script('wf-action', [{ action, usage: { prompt_tokens: 321, completion_tokens: 9 } }, final('done')]);

    const first = await decide('wf-action', 1);
    assert.equal(first.object, 'chat.completion');
    assert.equal(first.choices[0]?.finish_reason, 'stop');
    assert.deepEqual(JSON.parse(first.choices[0]?.message.content ?? ''), action);
    assert.deepEqual(first.usage, { prompt_tokens: 321, completion_tokens: 9, total_tokens: 330 });

    const second = await decide('wf-action', 2);
    assert.deepEqual(JSON.parse(second.choices[0]?.message.content ?? ''), { kind: 'final', answer: 'done' });
    assert.deepEqual(second.usage, { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 });
  });

  test('raw content is passed through untouched (malformed JSON)', async () => {
    server.script('wf-raw', [{ content: '{"kind": "tool", oops' }]);
    const res = await decide('wf-raw', 1);
    assert.equal(res.choices[0]?.message.content, '{"kind": "tool", oops');
  });

  test('records the request, lower-cased headers and routes by Idempotency-Key', async () => {
    server.script('wf-a', [final('from A')]);
    server.script('wf-b', [final('from B')]);
    const [b, a] = await Promise.all([decide('wf-b', 1, { goal: 'b' }), decide('wf-a', 1, { goal: 'a' })]);
    assert.equal(JSON.parse(a.choices[0]?.message.content ?? '').answer, 'from A');
    assert.equal(JSON.parse(b.choices[0]?.message.content ?? '').answer, 'from B');

    const [rec] = server.requests('wf-a');
    assert.ok(rec);
    assert.equal(rec.idempotencyKey, 'wf-a:decide:1');
    assert.equal(rec.workflowId, 'wf-a');
    assert.equal(rec.headers['idempotency-key'], 'wf-a:decide:1');
    assert.equal(rec.headers['authorization'], 'Bearer test-key');
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/v1/chat/completions');
    assert.equal(rec.status, 200);
    assert.equal(rec.aborted, false);
    assert.equal(rec.body.temperature, 0);
    assert.deepEqual(rec.body.response_format, { type: 'json_object' });
    assert.deepEqual(JSON.parse(rec.body.messages[1].content), { goal: 'a' });
  });

  test('HTTP 429 with retry-after surfaces as RateLimitError with headers', async () => {
    server.script('wf-429', [{ status: 429, headers: { 'Retry-After': '7' } }, final('ok')]);
    const err = await decide('wf-429', 1).then(
      () => assert.fail('expected a 429'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof RateLimitError, String(err));
    assert.equal(err.status, 429);
    assert.equal(err.headers.get('retry-after'), '7');
    assert.equal(err.code, 'rate_limit_exceeded');
    assert.equal(err.requestID, `req_scripted_${server.requests('wf-429')[0]?.id}`);
    // maxRetries: 0 means the client did not retry; the next request gets the next reply.
    assert.equal(server.requests('wf-429').length, 1);
    const retry = await decide('wf-429', 1);
    assert.equal(JSON.parse(retry.choices[0]?.message.content ?? '').answer, 'ok');
  });

  test('500 and 401 map to InternalServerError and AuthenticationError', async () => {
    server.script('wf-errs', [
      { status: 500 },
      { status: 401, body: { error: { message: 'bad key', type: 'invalid_request_error', code: 'invalid_api_key' } } },
    ]);
    await assert.rejects(decide('wf-errs', 1), (e: unknown) => e instanceof InternalServerError && e.status === 500);
    await assert.rejects(
      decide('wf-errs', 2),
      (e: unknown) => e instanceof AuthenticationError && e.status === 401 && e.message === '401 bad key',
    );
  });

  test('a hanging reply aborted by the client is recorded as aborted', async () => {
    server.script('wf-hang', [{ hang: true }]);
    const ac = new AbortController();
    const pending = decide('wf-hang', 1, { goal: 'hang' }, ac.signal);
    await server.waitFor((r) => r.workflowId === 'wf-hang');
    ac.abort();
    await assert.rejects(pending, (e: unknown) => e instanceof APIUserAbortError);
    const rec = await server.waitForAbort((r) => r.workflowId === 'wf-hang');
    assert.equal(rec.aborted, true);
    assert.equal(typeof rec.closedAt, 'number');
    assert.equal(rec.status, undefined);
  });

  test('a client timeout during a delayed reply is an abort, and nothing is written late', async () => {
    server.script('wf-slow', [final('too late', { delayMs: 400 })]);
    const err = await client.chat.completions
      .create(
        { model: 'm', messages: [{ role: 'user', content: '{}' }] },
        { timeout: 100, headers: { 'Idempotency-Key': 'wf-slow:decide:1' } },
      )
      .then(
        () => assert.fail('expected a timeout'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof APIConnectionTimeoutError, String(err));
    const rec = await server.waitForAbort((r) => r.workflowId === 'wf-slow');
    await new Promise((r) => setTimeout(r, 450));
    assert.equal(rec.status, undefined);
  });

  test('an exhausted script answers 500 naming the workflow', async () => {
    server.script('wf-short', [final('only one')]);
    await decide('wf-short', 1);
    await assert.rejects(
      decide('wf-short', 2),
      (e: unknown) =>
        e instanceof InternalServerError && e.message.includes('scripted LLM: script exhausted for wf-short'),
    );
  });

  test('an unscripted workflow gets 500 "no script"; GET /models lists models', async () => {
    await assert.rejects(
      decide('wf-nobody', 1),
      (e: unknown) => e instanceof InternalServerError && /no script/.test(e.message),
    );
    const models = await client.models.list();
    assert.ok(models.data.some((m) => m.id === 'scripted-llm'));
  });

  test('close() destroys hanging sockets: the client sees a connection error, not an abort', async () => {
    const own = await ScriptedLlmServer.start({ defaultScript: [{ hang: true }] });
    const c = new OpenAI({ apiKey: 'k', baseURL: own.baseUrl, maxRetries: 0 });
    const pending = c.chat.completions.create(
      { model: 'm', messages: [{ role: 'user', content: '{}' }] },
      { headers: { 'Idempotency-Key': 'wf-x:decide:1' } },
    );
    const rec = await own.waitFor((r) => r.workflowId === 'wf-x');
    await own.close();
    await assert.rejects(
      pending,
      (e: unknown) => e instanceof APIConnectionError && !(e instanceof APIConnectionTimeoutError),
    );
    assert.equal(rec.aborted, false);
    assert.equal(typeof rec.closedAt, 'number');
  });

  test('function scripts see the request and a per-workflow index', async () => {
    const seen: Array<[string | undefined, number]> = [];
    server.script('wf-fn', async (req: RecordedRequest, i: number) => {
      seen.push([req.idempotencyKey, i]);
      return final(`call ${i}`);
    });
    await decide('wf-fn', 1);
    const res = await decide('wf-fn', 2);
    assert.equal(JSON.parse(res.choices[0]?.message.content ?? '').answer, 'call 1');
    assert.deepEqual(seen, [
      ['wf-fn:decide:1', 0],
      ['wf-fn:decide:2', 1],
    ]);
  });
});

describe('refundDemoModel', () => {
  // The support data's deterministic tool results.
  const TOOL_RESULTS: Record<string, (args: Record<string, unknown>) => unknown> = {
    get_user_profile: ({ user_id }) =>
      ({
        42: { user: { id: 42, name: 'Anna', country: 'US', tier: 'pro' } },
        7: { user: { id: 7, name: 'Max', country: 'US', tier: 'free' } },
      })[Number(user_id)],
    get_user_billing: ({ user_id }) =>
      ({
        42: { billing: { currency: 'USD', plan: 'pro_monthly', price_usd: 49.0, days_since_first_payment: 10 } },
        7: { billing: { currency: 'USD', plan: 'free', price_usd: 0.0, days_since_first_payment: 120 } },
      })[Number(user_id)],
    search_policy: () => ({
      matches: [
        {
          id: 'refund-v3',
          title: 'Refund Policy',
          snippet: 'Pro monthly subscriptions are refundable within 14 days from the first payment.',
        },
        {
          id: 'free-v1',
          title: 'Free Plan Policy',
          snippet: 'Free plan has no billable payments and cannot be refunded.',
        },
      ],
    }),
  };

  /** A miniature agent loop: decide over HTTP, run the fake tool, feed the observation back. */
  async function runDemo(workflowId: string, userId: number, tools = TOOLS) {
    server.script(workflowId, refundDemoModel);
    const history: Array<{
      step: number;
      action: { kind: 'tool'; name: string; args: Record<string, unknown> };
      observation: unknown;
    }> = [];
    const calls: string[] = [];
    for (let step = 1; step <= 6; step++) {
      const payload = {
        goal: `User ${userId} asked: Can I get a refund now?`,
        principal: { user_id: userId },
        state_summary: { steps_completed: history.length, tools_used: history.map((h) => h.action.name) },
        available_tools: tools,
        untrusted_observations: { notice: 'tool results', steps: history.slice(-3) },
      };
      const res = await decide(workflowId, step, payload);
      const action = JSON.parse(res.choices[0]?.message.content ?? '');
      if (action.kind === 'final') return { calls, answer: action.answer as string };
      assert.equal(action.kind, 'tool');
      calls.push(action.name);
      const data = TOOL_RESULTS[action.name]?.(action.args);
      const text = JSON.stringify(data);
      history.push({
        step,
        action,
        observation: { tool: action.name, ok: true, data, source: 'test', bytes: text.length, truncated: false },
      });
    }
    return assert.fail('the demo model never answered');
  }

  test('walks profile, billing, policy, then answers from the observations (user 42)', async () => {
    const { calls, answer } = await runDemo('wf-demo-42', 42);
    assert.deepEqual(calls, ['get_user_profile', 'get_user_billing', 'search_policy']);
    assert.equal(
      answer,
      "Yes. Anna's pro_monthly plan (USD 49.00) was first paid 10 days ago, within the 14-day refund window, so a refund of USD 49.00 is possible to the original payment method.",
    );
    const args = server
      .requests('wf-demo-42')
      .map((r) => JSON.parse(r.body.messages[1].content).state_summary.tools_used.length);
    assert.deepEqual(args, [0, 1, 2, 3]);
  });

  test('a free user gets no refund', async () => {
    const { calls, answer } = await runDemo('wf-demo-7', 7);
    assert.equal(calls.length, 3);
    assert.match(answer, /^No\. Max is on the free plan/);
  });

  test('says it cannot verify when a needed tool is not available', async () => {
    const { calls, answer } = await runDemo(
      'wf-demo-nopolicy',
      42,
      TOOLS.filter((t) => t.name !== 'search_policy'),
    );
    assert.deepEqual(calls, ['get_user_profile', 'get_user_billing']);
    assert.match(answer, /cannot verify/);
    assert.match(answer, /search_policy/);
  });
});

describe('ScriptedLlmServer tokens-per-minute limit', () => {
  test('answers 429 with Retry-After above the limit and records the most tokens it answered in a minute', async () => {
    const limited = await ScriptedLlmServer.start({ tokensPerMinute: 300, defaultScript: () => final('ok') });
    try {
      const c = new OpenAI({ apiKey: 'k', baseURL: limited.baseUrl, maxRetries: 0 });
      const ask = () =>
        c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { headers: {} });
      assert.equal((await ask()).usage?.total_tokens, 120);
      await ask();
      const refused = await ask().then(
        () => assert.fail('a third call of 120 tokens exceeds 300 per minute'),
        (err: unknown) => err,
      );
      assert.ok(refused instanceof RateLimitError);
      const retryAfter = Number(refused.headers?.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
      assert.deepEqual(limited.rateLimitStats(), {
        tokensPerMinute: 300,
        maxTokensPerMinute: 240,
        refused: 1,
        answered: 2,
      });
    } finally {
      await limited.close();
    }
  });
});
