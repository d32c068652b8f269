// The worker's tool spans (worker/genai-spans.ts) in-process, through an in-memory exporter: a write's
// `execute_tool` span says its effect outcome as its answer reads (the same reading as the run's
// effects), `unknown` when the attempt failed; a read has none; the lookup by key of a cut-off write
// is a `reconcile <tool>` span with what it found. The Jaeger e2e checks the confirmed path end to end.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as api from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Resource } from '@opentelemetry/resources';
import type { Context } from '@temporalio/activity';
import type { ActivityExecuteInput } from '@temporalio/worker';
import { genAiSpans } from '../../worker/genai-spans';
import type { Tracing } from '../../runtime/telemetry/tracing';
import type { Observation } from '../../common/types';

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor(exporter);
const provider = new NodeTracerProvider({ spanProcessors: [processor] });
provider.register();
const tracing: Tracing = {
  settings: { tracesUrl: 'http://127.0.0.1:1/v1/traces', serviceName: 'genai-spans-test', captureContent: false },
  api,
  resource: new Resource({}),
  processor,
  shutdown: () => provider.shutdown(),
};
const interceptors = genAiSpans(tracing, { model: 'test-model', secrets: [] });
const KEY = 'run-1/first:tool:3:issue_refund:abc';

/** Runs activity `type` with `arg` through the interceptor, `answer` standing for the activity; its one span. */
async function spanOf(type: string, arg: unknown, answer: () => Promise<unknown>) {
  exporter.reset();
  const { inbound } = interceptors({ info: { activityType: type } } as unknown as Context);
  await inbound!.execute!({ args: [arg], headers: {} } as unknown as ActivityExecuteInput, answer).catch(
    () => undefined,
  );
  const spans = exporter.getFinishedSpans();
  assert.equal(spans.length, 1, spans.map((s) => s.name).join(', '));
  return spans[0]!;
}

const refundArgs = { idempotency_key: KEY, args: { user_id: 1001, amount_usd: 49 } };
const observation = (data: unknown, ok = true): Observation =>
  ({ ok, source: 'refunds-service', data, bytes: 10, truncated: false }) as unknown as Observation;

describe("a tool call's span carries a write's effect outcome", () => {
  it('a refund the service confirmed: confirmed, via tool, with its key', async () => {
    const span = await spanOf('issue_refund', refundArgs, async () =>
      observation({ refund: { refund_id: 7, state: 'confirmed' } }),
    );
    assert.equal(span.name, 'execute_tool issue_refund');
    assert.equal(span.attributes['agent.effect.state'], 'confirmed');
    assert.equal(span.attributes['agent.effect.via'], 'tool');
    assert.equal(span.attributes['agent.idempotency_key'], KEY);
  });

  it('a refund the service rejected, and one refused before it reached the service', async () => {
    const rejected = await spanOf('issue_refund', refundArgs, async () =>
      observation({ refund: { refund_id: 8, state: 'rejected' }, rejected: 'window_closed' }, false),
    );
    assert.equal(rejected.attributes['agent.effect.state'], 'rejected');
    const refused = await spanOf('issue_refund', refundArgs, async () =>
      observation({ rejected: 'not_principal' }, false),
    );
    assert.equal(refused.attributes['agent.effect.state'], 'not_made');
  });

  it('an attempt that failed: unknown (the workflow looks the key up next), outcome failed', async () => {
    const span = await spanOf('issue_refund', refundArgs, async () => {
      throw new Error('refunds service unreachable');
    });
    assert.equal(span.attributes['agent.tool.outcome'], 'failed');
    assert.equal(span.attributes['agent.effect.state'], 'unknown');
  });

  it('a read has no effect attributes', async () => {
    const span = await spanOf('get_user_profile', { idempotency_key: KEY, args: { user_id: 42 } }, async () =>
      observation({ user: { tier: 'pro' } }),
    );
    assert.equal(span.name, 'execute_tool get_user_profile');
    assert.equal(span.attributes['agent.effect.state'], undefined);
    assert.equal(span.attributes['agent.effect.via'], undefined);
  });

  it('the lookup by key of a cut-off write: a reconcile span with what it found', async () => {
    const span = await spanOf('reconcile_issue_refund', { idempotency_key: KEY, settle: true }, async () => ({
      state: 'not_made',
    }));
    assert.equal(span.name, 'reconcile issue_refund');
    assert.equal(span.attributes['gen_ai.tool.name'], 'issue_refund');
    assert.equal(span.attributes['agent.effect.state'], 'not_made');
    assert.equal(span.attributes['agent.effect.via'], 'reconcile');
    assert.equal(span.attributes['agent.idempotency_key'], KEY);
  });
});
