// OpenTelemetry traces, end to end: a real worker process and the real CLI (`agent run`) with
// OTEL_EXPORTER_OTLP_ENDPOINT pointing at a real Jaeger (local-servers/jaeger.ts), the run's trace
// read back through Jaeger's query API. One trace goes from the CLI's start through the workflow to
// every activity, with a GenAI span per decision and a span per tool call; prompt and observation
// content only with content capture on, redacted as the model reads it; the API key never; and a
// CLI and worker without an endpoint (or with OTEL_SDK_DISABLED=true) export nothing.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { final, tool } from '../../offline-model/scripted-replies';
import { makeTempDir } from '../../local-servers/child-processes';
import { startJaeger, waitForJaeger } from '../../local-servers/jaeger';
import type { JaegerServer } from '../../local-servers/jaeger';
import { eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

/** The worker's API key: sent to the scripted model, echoed back by it, never exported. */
const API_KEY = `sk-otel${uniqueId('secret').replace(/-/g, '')}`;
/** User 42's name in the seed data: get_user_profile marks it sensitive. */
const SENSITIVE_NAME = 'Anna';

let jaeger: JaegerServer;
const fixture = agentFixture({
  queue: 'otel',
  worker: false,
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

/** Starts a worker and runs `agent run ... --wait` with these OTEL_* settings; the run's id. */
async function tracedRun(otel: Record<string, string>, cliOtel: Record<string, string> = otel): Promise<string> {
  const worker = fixture.startWorker({ OPENAI_API_KEY: API_KEY, ...otel });
  try {
    await worker.ready;
    const id = uniqueId('otel-run');
    fixture.llm.script(id, [
      tool('get_user_profile', { user_id: 42 }),
      final(`Anna's plan is pro. (key ${API_KEY}, Bearer ${API_KEY})`),
    ]);
    const run = await runCli(
      fixture.env,
      ['run', 'User 42 asked: which plan am I on?', '--user', '42', '--id', id, '--wait'],
      cliOtel,
    );
    assert.equal(run.code, 0, run.stderr);
    return id;
  } finally {
    await worker.stop();
  }
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
    const id = await tracedRun(
      { ...otel, OTEL_SERVICE_NAME: `worker-${suffix}` },
      { ...otel, OTEL_SERVICE_NAME: `cli-${suffix}` },
    );
    const trace = await runTrace(`cli-${suffix}`, id);
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
    for (const span of runActivities) {
      const scheduled = byId.get(span.references[0]!.spanID)!;
      assert.equal(scheduled.operationName, span.operationName.replace('RunActivity', 'StartActivity'));
      assert.equal(byId.get(scheduled.references[0]!.spanID)?.operationName, 'RunWorkflow:reactAgent');
    }

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
    assert.ok(!text.includes(API_KEY), 'the API key the model echoed is masked');
    // The model wrote the name in its answer itself (not a tool's field): only the observation's is redacted.
    assert.equal(text.split(SENSITIVE_NAME).length - 1, 1, 'the name appears only in the answer the model wrote');
  });

  it('without an endpoint, or with OTEL_SDK_DISABLED=true, the CLI and the worker export nothing', async () => {
    const suffix = uniqueId('off');
    const ids = [
      await tracedRun({ OTEL_SERVICE_NAME: `unset-${suffix}` }),
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
    });
    await runTrace(`marker-${marker}`, tracedId);
    const names = await services();
    assert.ok(!names.some((n) => n.endsWith(suffix)), `no service of the untraced runs: ${names.join(', ')}`);
    for (const id of ids) {
      for (const service of names) assert.deepEqual(await traces(service, { temporalWorkflowId: id }), [], id);
    }
  });
});
