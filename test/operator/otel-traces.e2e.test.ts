// OpenTelemetry traces, end to end: a real worker process and the real CLI (`agent run`) with
// OTEL_EXPORTER_OTLP_ENDPOINT pointing at a real Jaeger (local-servers/jaeger.ts), the run's trace
// read back through Jaeger's query API. One trace goes from the CLI's start through the workflow to
// every activity, with a GenAI span per decision and a span per tool call; prompt and observation
// content only with content capture on, redacted as the model reads it; the API key never; and a
// CLI and worker without an endpoint (or with OTEL_SDK_DISABLED=true) export nothing.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { extendUpdate, stateQuery } from '../../common/agent-messages';
import { byStep, final, message, tool } from '../../offline-model/scripted-replies';
import { chat, chatSession } from '../helpers/chat';
import { makeTempDir } from '../../local-servers/child-processes';
import { startJaeger, waitForJaeger } from '../../local-servers/jaeger';
import type { JaegerServer } from '../../local-servers/jaeger';
import { DIST, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { pendingApproval } from '../../client/approvals';
import { billingOf, finalAnswer, refundOf, refundRunArgs } from '../helpers/refund-fixtures';

/** The worker's API key: sent to the scripted model, echoed back by it, never exported. */
const API_KEY = `sk-otel${uniqueId('secret').replace(/-/g, '')}`;
/** User 42's name in the seed data: get_user_profile marks it sensitive. */
const SENSITIVE_NAME = 'Anna';

let jaeger: JaegerServer;
const fixture = agentFixture({
  queue: 'otel',
  worker: false,
  refunds: true,
  prepare: async () => {
    // .ci/run builds Jaeger in the background while the other Go builds run: wait for it.
    jaeger = await startJaeger({ logDir: makeTempDir('jaeger-'), binary: await waitForJaeger(30 * 60_000) });
  },
});

after(() => jaeger?.stop());

interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; spanID: string }[];
  tags: { key: string; value: unknown }[];
  /** OpenTelemetry span events: Jaeger shows each as a log whose `event` field is its name. */
  logs?: { fields: { key: string; value: unknown }[] }[];
  processID: string;
}
interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

async function traces(service: string, tags?: Record<string, string>): Promise<JaegerTrace[]> {
  const query = new URLSearchParams({ service, limit: '50', lookback: '1h' });
  if (tags) query.set('tags', JSON.stringify(tags));
  const res = await fetch(`${jaeger.queryUrl}/api/traces?${query}`);
  if (!res.ok) return [];
  return ((await res.json()) as { data: JaegerTrace[] | null }).data ?? [];
}

async function services(): Promise<string[]> {
  const res = await fetch(`${jaeger.queryUrl}/api/services`);
  return ((await res.json()) as { data: string[] | null }).data ?? [];
}

const tag = (span: JaegerSpan, key: string) => span.tags.find((t) => t.key === key)?.value;
const named = (trace: JaegerTrace, name: string) => trace.spans.filter((s) => s.operationName === name);
/** The span's events, each as {event name, its fields}. */
const eventsOf = (span: JaegerSpan) =>
  (span.logs ?? []).map(
    (log) => Object.fromEntries(log.fields.map((f) => [f.key, f.value])) as Record<string, unknown>,
  );

/** Preloaded into the CLI and the worker by NODE_OPTIONS: counts the OTel modules each loaded. */
const PROBE = path.join(DIST, 'test', 'helpers', 'otel-module-probe.js');

/**
 * Starts a worker and runs `agent run ... --wait` `runs` times on it (a second run reuses the worker's
 * workflow context) with these OTEL_* settings; the runs' ids.
 */
async function tracedRuns(
  otel: Record<string, string>,
  cliOtel: Record<string, string> = otel,
  runs = 1,
): Promise<string[]> {
  const worker = fixture.startWorker({ OPENAI_API_KEY: API_KEY, ...otel });
  const ids: string[] = [];
  try {
    await worker.ready;
    for (let i = 0; i < runs; i++) {
      const id = uniqueId('otel-run');
      fixture.llm.script(id, [
        tool('get_user_profile', { user_id: 42 }),
        final(`Anna's plan is pro. (key ${API_KEY}, Bearer ${API_KEY})`),
      ]);
      const run = await runCli(
        fixture.env,
        // The goal carries the key as an operator might paste it: the prompt on a span must not.
        ['run', `User 42 asked: which plan am I on? (Bearer ${API_KEY})`, '--user', '42', '--id', id, '--wait'],
        cliOtel,
      );
      assert.equal(run.code, 0, run.stderr);
      ids.push(id);
    }
    return ids;
  } finally {
    await worker.stop();
  }
}

async function tracedRun(otel: Record<string, string>, cliOtel: Record<string, string> = otel): Promise<string> {
  return (await tracedRuns(otel, cliOtel))[0]!;
}

/** What the probe wrote: OTel modules loaded per process (the CLI's and the worker's). */
function probed(file: string): { script: string; loaded: number }[] {
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { script: string; loaded: number });
}

/** The one trace that holds the run's start, once it holds every span the run makes. */
async function runTrace(cliService: string, id: string): Promise<JaegerTrace> {
  return eventually(
    `the trace of ${id} with its workflow, decision and tool spans in Jaeger`,
    async () => {
      const found = await traces(cliService, { temporalWorkflowId: id });
      const trace = found.find((t) => named(t, 'StartWorkflow:reactAgent').length > 0);
      if (!trace) return undefined;
      const complete =
        named(trace, 'RunWorkflow:reactAgent').length === 1 &&
        named(trace, 'step 2').length === 1 &&
        trace.spans.filter((s) => s.operationName.startsWith('chat ')).length === 2 &&
        named(trace, 'execute_tool get_user_profile').length === 1;
      return complete ? trace : undefined;
    },
    30_000,
  );
}

describe('OpenTelemetry traces in Jaeger', () => {
  it('one trace from `agent run` through the workflow to every activity, with GenAI and tool spans; no content by default', async () => {
    const suffix = uniqueId('svc');
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint };
    const ids = await tracedRuns(
      { ...otel, OTEL_SERVICE_NAME: `worker-${suffix}` },
      { ...otel, OTEL_SERVICE_NAME: `cli-${suffix}` },
      2,
    );
    // The second run shares the worker's workflow context with the first: traced the same.
    const [first, second] = [await runTrace(`cli-${suffix}`, ids[0]!), await runTrace(`cli-${suffix}`, ids[1]!)];
    assert.notEqual(first.traceID, second.traceID, 'a trace per run');
    const id = ids[1]!;
    const trace = second;
    const serviceOf = (span: JaegerSpan) => trace.processes[span.processID]?.serviceName;

    // The client's start is the root; the workflow runs under it; every activity under the workflow.
    const [start] = named(trace, 'StartWorkflow:reactAgent');
    assert.equal(start!.references.length, 0, 'the start span is the root');
    assert.equal(serviceOf(start!), `cli-${suffix}`);
    const [workflow] = named(trace, 'RunWorkflow:reactAgent');
    assert.equal(serviceOf(workflow!), `worker-${suffix}`);
    assert.deepEqual(
      workflow!.references.map((r) => r.spanID),
      [start!.spanID],
    );
    const runActivities = trace.spans.filter((s) => s.operationName.startsWith('RunActivity:'));
    assert.deepEqual(runActivities.map((s) => s.operationName).sort(), [
      'RunActivity:decide',
      'RunActivity:decide',
      'RunActivity:get_user_profile',
    ]);
    const byId = new Map(trace.spans.map((s) => [s.spanID, s]));
    const parentOf = (span: JaegerSpan) => byId.get(span.references[0]?.spanID ?? '');
    // A span per step, under the workflow; each step's activities under it.
    const steps = trace.spans.filter((s) => /^step \d+$/.test(s.operationName));
    assert.deepEqual(steps.map((s) => s.operationName).sort(), ['step 1', 'step 2']);
    for (const step of steps) assert.equal(parentOf(step)?.operationName, 'RunWorkflow:reactAgent');
    for (const span of runActivities) {
      const scheduled = parentOf(span)!;
      assert.equal(scheduled.operationName, span.operationName.replace('RunActivity', 'StartActivity'));
      assert.match(parentOf(scheduled)?.operationName ?? '', /^step \d+$/);
    }
    assert.equal(
      parentOf(parentOf(parentOf(named(trace, 'execute_tool get_user_profile')[0]!)!)!)?.operationName,
      'step 1',
      'the tool call is step 1',
    );

    // A GenAI span per decision, inside its activity.
    const chats = trace.spans.filter((s) => s.operationName.startsWith('chat '));
    for (const chat of chats) {
      assert.equal(byId.get(chat.references[0]!.spanID)?.operationName, 'RunActivity:decide');
      assert.equal(tag(chat, 'gen_ai.operation.name'), 'chat');
      assert.equal(tag(chat, 'gen_ai.system'), 'openai');
      assert.equal(typeof tag(chat, 'gen_ai.request.model'), 'string');
      assert.ok((tag(chat, 'gen_ai.usage.input_tokens') as number) > 0, 'input tokens');
      assert.ok((tag(chat, 'gen_ai.usage.output_tokens') as number) > 0, 'output tokens');
      assert.equal(typeof tag(chat, 'agent.llm.cost_usd'), 'number');
      assert.match(String(tag(chat, 'gen_ai.response.finish_reasons')), /stop|tool_calls/);
      assert.match(String(tag(chat, 'agent.idempotency_key')), new RegExp(id));
      assert.equal(tag(chat, 'gen_ai.input.messages'), undefined, 'no prompt without content capture');
      assert.equal(tag(chat, 'gen_ai.output.messages'), undefined, 'no answer without content capture');
    }
    assert.deepEqual(chats.map((c) => tag(c, 'agent.step')).sort(), [1, 2]);

    // A span per tool call: the tool, its outcome and idempotency key; no arguments or result.
    const [call] = named(trace, 'execute_tool get_user_profile');
    assert.equal(byId.get(call!.references[0]!.spanID)?.operationName, 'RunActivity:get_user_profile');
    assert.equal(tag(call!, 'gen_ai.tool.name'), 'get_user_profile');
    assert.equal(tag(call!, 'agent.tool.outcome'), 'ok');
    assert.match(String(tag(call!, 'agent.idempotency_key')), new RegExp(id));
    assert.equal(tag(call!, 'gen_ai.tool.call.result'), undefined);

    const text = JSON.stringify(trace);
    assert.ok(!text.includes(API_KEY), 'the API key is not exported');
    assert.ok(!text.includes(SENSITIVE_NAME), 'no content at all by default');
  });

  it("`agent chat`: the conversation run is one trace from the chat's start, its four decisions and the tool call in it", async () => {
    const suffix = uniqueId('svc');
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_SERVICE_NAME: `chat-${suffix}` };
    const worker = fixture.startWorker({ OPENAI_API_KEY: API_KEY, ...otel });
    const id = uniqueId('otel-chat');
    try {
      await worker.ready;
      fixture.llm.script(
        id,
        byStep({
          1: message('Hello! How can I help you today?'),
          2: tool('get_user_profile', { user_id: 42 }),
          3: message('You are on the pro plan. Anything else?'),
          4: final('Goodbye!'),
        }),
      );
      const out = await chat(
        fixture.env,
        ['--user', '42', '--id', id, '--max-steps', '6'],
        'What plan am I on?\nNo, thanks.\n',
        otel,
      );
      assert.equal(out.code, 0, out.stderr);
    } finally {
      await worker.stop();
    }
    const trace = await eventually(
      `the trace of the conversation ${id}`,
      async () =>
        (await traces(`chat-${suffix}`, { temporalWorkflowId: id })).find(
          (t) =>
            named(t, 'RunWorkflow:reactAgent').length === 1 &&
            t.spans.filter((s) => s.operationName.startsWith('chat ')).length === 4 &&
            named(t, 'execute_tool get_user_profile').length === 1,
        ),
      30_000,
    );
    const roots = trace.spans.filter((s) => s.references.length === 0);
    assert.equal(roots.length, 1, 'one root');
    assert.match(roots[0]!.operationName, /Workflow:reactAgent$/, "the chat's start is the root");
    assert.ok(!JSON.stringify(trace).includes(API_KEY));
  });

  it('an approval and the refund it let through are events on their step; a cancel is one on the step it cut', async () => {
    const suffix = uniqueId('svc');
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_SERVICE_NAME: `events-${suffix}` };
    const worker = fixture.startWorker({ OPENAI_API_KEY: API_KEY, ...otel });
    const user = fixture.refunds.nextUser();
    const refundId = uniqueId('otel-refund');
    const cancelId = uniqueId('otel-cancel');
    try {
      await worker.ready;
      fixture.llm.script(refundId, [billingOf(user), refundOf(user, 49), finalAnswer()]);
      const started = await runCli(fixture.env, refundRunArgs(user, refundId, 120), otel);
      assert.equal(started.code, 0, started.stderr);
      const handle = fixture.client.workflow.getHandle(refundId);
      await eventually('the refund awaiting approval', () => pendingApproval(handle));
      const approved = await runCli(fixture.env, ['approve', refundId], otel);
      assert.equal(approved.code, 0, approved.stderr);
      await handle.result();

      fixture.llm.script(cancelId, [tool('get_user_profile', { user_id: 42 }), { hang: true }]);
      const run = await runCli(fixture.env, ['run', 'User 42 asked: my plan?', '--user', '42', '--id', cancelId], otel);
      assert.equal(run.code, 0, run.stderr);
      await fixture.llm.waitFor(
        (r) => r.workflowId === cancelId && (r.idempotencyKey ?? '').endsWith(':decide:2'),
        30_000,
      );
      const cancelled = await runCli(fixture.env, ['cancel', cancelId, '--wait', '60s'], otel);
      assert.equal(cancelled.code, 0, cancelled.stdout + cancelled.stderr);
    } finally {
      await worker.stop();
    }
    const stepWith = async (id: string, step: string, event: string) =>
      eventually(
        `${id}'s ${step} span with its ${event} event in Jaeger`,
        async () => {
          for (const t of await traces(`events-${suffix}`, { temporalWorkflowId: id }))
            for (const span of named(t, step)) if (eventsOf(span).some((e) => e.event === event)) return span;
          return undefined;
        },
        30_000,
      );
    const refundStep = await stepWith(refundId, 'step 2', 'approval');
    const events = eventsOf(refundStep);
    assert.deepEqual(
      events.map((e) => e.event),
      ['approval', 'effect'],
    );
    assert.equal(events[0]!['agent.approval'], 'approve');
    assert.equal(events[0]!['gen_ai.tool.name'], 'issue_refund');
    assert.equal(events[1]!['agent.effect.state'], 'confirmed');
    assert.equal(events[1]!['agent.effect.via'], 'tool');
    assert.match(String(events[1]!['agent.idempotency_key']), /issue_refund/);
    const cancelStep = await stepWith(cancelId, 'step 2', 'cancel');
    assert.ok(eventsOf(cancelStep).some((e) => e.event === 'cancel'));

    // The refund's own span carries its effect outcome, as the activity that made it observed it.
    const refundCall = await eventually(
      `${refundId}'s execute_tool issue_refund span in Jaeger`,
      async () => {
        for (const t of await traces(`events-${suffix}`, { temporalWorkflowId: refundId }))
          for (const span of named(t, 'execute_tool issue_refund')) return span;
        return undefined;
      },
      30_000,
    );
    assert.equal(tag(refundCall, 'agent.tool.outcome'), 'ok');
    assert.equal(tag(refundCall, 'agent.effect.state'), 'confirmed');
    assert.equal(tag(refundCall, 'agent.effect.via'), 'tool');
    assert.equal(tag(refundCall, 'agent.idempotency_key'), events[1]!['agent.idempotency_key']);
  });

  it("a customer's yes to a write is a consent event on its step; the write's span has its effect outcome", async () => {
    const suffix = uniqueId('svc');
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_SERVICE_NAME: `consent-${suffix}` };
    const retailDb = path.join(makeTempDir('otel-retail-'), 'retail.sqlite');
    const worker = fixture.startWorker({ OPENAI_API_KEY: API_KEY, AGENT_RETAIL_DB: retailDb, ...otel });
    const id = uniqueId('otel-consent');
    // τ²-bench's retail data: ivan_santos_6635's pending order.
    const cancel = { order_id: '#W8770097', reason: 'no longer needed' };
    try {
      await worker.ready;
      fixture.llm.script(
        id,
        byStep({
          1: message('Hello! How can I help you today?'),
          2: tool('find_user_id_by_email', { email: 'ivan.santos3158@example.com' }),
          3: tool('cancel_pending_order', cancel),
          4: final('Your order is cancelled.'),
        }),
      );
      const session = chatSession(
        fixture.env,
        ['--domain', 'retail', '--allow', 'all', '--id', id, '--max-steps', '8'],
        {
          extraEnv: otel,
        },
      );
      await session.shows(/agent: Hello!/);
      session.type('Please cancel order #W8770097, my email is ivan.santos3158@example.com');
      await session.shows(/Reply "yes" to confirm/);
      session.type('yes');
      await session.shows(/conversation ended: success/);
      session.end();
      const out = await session.done;
      assert.equal(out.code, 0, out.output);
    } finally {
      await worker.stop();
    }
    const found = await eventually(
      `${id}'s consent event and the write's span in Jaeger`,
      async () => {
        for (const t of await traces(`consent-${suffix}`, { temporalWorkflowId: id })) {
          const step = named(t, 'step 3').find((s) => eventsOf(s).some((e) => e.event === 'consent'));
          const [write] = named(t, 'execute_tool cancel_pending_order');
          if (step && write) return { step, write };
        }
        return undefined;
      },
      30_000,
    );
    const consent = eventsOf(found.step).filter((e) => e.event === 'consent');
    assert.equal(consent.length, 1);
    assert.equal(consent[0]!['gen_ai.tool.name'], 'cancel_pending_order');
    assert.equal(consent[0]!['agent.consent'], 'given');
    assert.equal(tag(found.write, 'agent.effect.state'), 'confirmed');
    assert.equal(tag(found.write, 'agent.effect.via'), 'tool');
    assert.ok(!JSON.stringify(eventsOf(found.step)).includes('W8770097'), 'no content in the events');
  });

  it('with content capture on: the prompt, the answer and the observation as the model reads them, sensitive fields redacted, the key masked', async () => {
    const suffix = uniqueId('svc');
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    };
    const id = await tracedRun(
      { ...otel, OTEL_SERVICE_NAME: `worker-${suffix}` },
      { ...otel, OTEL_SERVICE_NAME: `cli-${suffix}` },
    );
    const trace = await runTrace(`cli-${suffix}`, id);
    const [call] = named(trace, 'execute_tool get_user_profile');
    const result = JSON.parse(String(tag(call!, 'gen_ai.tool.call.result'))) as {
      data: { user: Record<string, unknown> };
      redacted?: string[];
    };
    assert.equal(result.data.user.tier, 'pro', 'the observation is there');
    assert.deepEqual(result.redacted, ['user.name']);
    assert.notEqual(result.data.user.name, SENSITIVE_NAME);
    assert.deepEqual(JSON.parse(String(tag(call!, 'gen_ai.tool.call.arguments'))), { user_id: 42 });

    const chats = trace.spans.filter((s) => s.operationName.startsWith('chat '));
    const second = chats.find((c) => tag(c, 'agent.step') === 2)!;
    const prompt = String(tag(second, 'gen_ai.input.messages'));
    assert.match(prompt, /which plan am I on/, 'the prompt is there');
    assert.match(prompt, /"tier\\?":\s*\\?"pro/, "the model's view of the observation is in the prompt");
    assert.match(String(tag(second, 'gen_ai.output.messages')), /plan is pro/, 'the answer is there');

    const text = JSON.stringify(trace);
    assert.ok(!text.includes(API_KEY), 'the API key the goal carried and the model echoed is masked');
    // The model wrote the name in its answer itself (not a tool's field): only the observation's is redacted.
    assert.equal(text.split(SENSITIVE_NAME).length - 1, 1, 'the name appears only in the answer the model wrote');
  });

  it('without an endpoint, or with OTEL_SDK_DISABLED=true, the CLI and the worker export nothing', async () => {
    const suffix = uniqueId('off');
    const probeOff = path.join(makeTempDir('otel-probe-'), 'off.jsonl');
    const probeOn = path.join(path.dirname(probeOff), 'on.jsonl');
    const probe = (file: string) => ({ NODE_OPTIONS: `--require ${PROBE}`, OTEL_PROBE_FILE: file });
    const ids = [
      await tracedRun({ OTEL_SERVICE_NAME: `unset-${suffix}`, ...probe(probeOff) }),
      await tracedRun({
        OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
        OTEL_SDK_DISABLED: 'true',
        OTEL_SERVICE_NAME: `disabled-${suffix}`,
      }),
    ];
    // A traced run after them: once its spans are in, anything the untraced ones sent would be too.
    const marker = uniqueId('svc');
    const tracedId = await tracedRun({
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
      OTEL_SERVICE_NAME: `marker-${marker}`,
      ...probe(probeOn),
    });
    // Without an endpoint neither the CLI nor the worker loads an OTel module; with one, both do.
    const off = probed(probeOff);
    const on = probed(probeOn);
    for (const script of ['cli.js', 'main.js']) {
      assert.ok(off.some((p) => p.script.endsWith(script)) && on.some((p) => p.script.endsWith(script)), script);
    }
    assert.deepEqual(
      off.filter((p) => p.loaded > 0),
      [],
    );
    assert.ok(
      on.every((p) => p.loaded > 0),
      JSON.stringify(on),
    );
    await runTrace(`marker-${marker}`, tracedId);
    const names = await services();
    assert.ok(!names.some((n) => n.endsWith(suffix)), `no service of the untraced runs: ${names.join(', ')}`);
    for (const id of ids) {
      for (const service of names) assert.deepEqual(await traces(service, { temporalWorkflowId: id }), [], id);
    }
  });
});

describe('hostile trace headers', () => {
  /** Headers no tracing client writes: not JSON, not an object, an object of numbers, another encoding. */
  const HOSTILE: Payload[] = [
    { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{not json') },
    { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('42') },
    { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"traceparent": 7}') },
    { metadata: { encoding: Buffer.from('binary/plain') }, data: Buffer.from([0xff, 0x00, 0x13]) },
    { metadata: {}, data: Buffer.from('x') },
  ];
  const TRACE_HEADER = '_tracer-data';

  /** A client that sends `header` as the trace header of every update and query. */
  function hostileClient(header: Payload): Client {
    const inject: WorkflowClientInterceptor = {
      startUpdate: (input, next) => next({ ...input, headers: { ...input.headers, [TRACE_HEADER]: header } }),
      query: (input, next) => next({ ...input, headers: { ...input.headers, [TRACE_HEADER]: header } }),
    };
    return new Client({
      connection: fixture.client.connection,
      namespace: fixture.env.namespace,
      interceptors: { workflow: [inject] },
    });
  }

  it('a traced run answers updates and queries whose trace header it cannot read, and ends normally', async () => {
    const suffix = uniqueId('svc');
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_SERVICE_NAME: `hostile-${suffix}` };
    const worker = fixture.startWorker({ OPENAI_API_KEY: API_KEY, ...otel });
    try {
      await worker.ready;
      const id = uniqueId('otel-hostile');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      fixture.llm.script(id, async (_req, index) => {
        if (index === 0) return tool('get_user_profile', { user_id: 42 });
        await gate; // the second decision waits while the hostile calls arrive
        return final('Done.');
      });
      const started = await runCli(
        fixture.env,
        ['run', 'User 42 asked: which plan am I on?', '--user', '42', '--id', id],
        otel,
      );
      assert.equal(started.code, 0, started.stderr);
      await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 2, 30_000);
      for (const header of HOSTILE) {
        const handle = hostileClient(header).workflow.getHandle(id);
        const receipt = await handle.executeUpdate(extendUpdate, { args: [{ steps: 1, reason: 'hostile header' }] });
        assert.ok(receipt, 'the update was answered');
        assert.ok(await handle.query(stateQuery), 'the query was answered');
      }
      release();
      const result = (await fixture.client.workflow.getHandle(id).result()) as { stop_reason: string };
      assert.equal(result.stop_reason, 'success');
      // Still one trace, still whole: the run's spans reached Jaeger.
      await runTrace(`hostile-${suffix}`, id);
    } finally {
      await worker.stop();
    }
  });
});
