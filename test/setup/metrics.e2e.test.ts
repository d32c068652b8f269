// The worker's Prometheus endpoint, scraped after real runs: the agent's own counters (runs
// started and ended by stop reason, steps, tool calls by tool and outcome, LLM latency by outcome
// and tokens) with exact values, next to the Temporal SDK's own metrics, on one port.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { final, tool } from '../../offline-model/scripted-replies';
import type { AgentInput } from '../../common/types';
import { Registry } from 'prom-client';
import { startMetricsServer } from '../../worker/metrics-server';
import { eventually } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';

const fixture = agentFixture({
  queue: 'metrics',
  workerEnv: { OPENAI_TIMEOUT_SECONDS: '30', AGENT_METRICS_PORT: '0' },
  setup: async () => {
    metricsUrl = await eventually(
      'the metrics URL in the worker log',
      () => /metrics=(http:\/\/\S+\/metrics)/.exec(fixture.worker.output())?.[1],
    );
  },
});
let metricsUrl: string;

const run = async (replies: Reply[], overrides: Partial<AgentInput> = {}) =>
  (await fixture.run(replies, overrides)).result;

/** `name{labels}` -> value, from the Prometheus text format. */
function parse(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const lineText of text.split('\n')) {
    if (lineText === '' || lineText.startsWith('#')) continue;
    const match = /^(\S+?(?:\{.*\})?)\s+(\S+)(?:\s+\d+)?$/.exec(lineText);
    if (match) samples.set(match[1]!, Number(match[2]));
  }
  return samples;
}

describe('worker metrics endpoint', () => {
  it('answers with the agent counters after runs, and the SDK metrics, on one port', async () => {
    // A principal with no records: both reads answer ok=false (an observation, not a failure).
    const ok = await run(
      [
        { status: 429, headers: { 'retry-after': '1' } },
        tool('get_user_profile', { user_id: 999_999 }),
        tool('get_user_billing', { user_id: 999_999 }),
        final('No such user.'),
      ],
      { principal: '999999' },
    );
    assert.equal(ok.stop_reason, 'success');
    assert.deepEqual(
      ok.history.map((h) => h.observation.ok),
      [false, false],
      'both tools answered ok=false',
    );
    const denied = await run([tool('get_user_profile', { user_id: 42 }), tool('search_policy', { query: 'refund' })], {
      allow: ['get_user_profile'],
    });
    assert.equal(denied.stop_reason, 'tool_denied:search_policy');
    const invented = await run([tool('delete_everything', {})], { allow: ['get_user_profile'] });
    assert.equal(invented.stop_reason, 'tool_denied:delete_everything');

    const response = await fetch(metricsUrl);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await response.text();
    const samples = parse(text);
    const expected: Record<string, number> = {
      agent_runs_started_total: 3,
      'agent_runs_ended_total{status="ok",stop_reason="success"}': 1,
      'agent_runs_ended_total{status="stopped",stop_reason="tool_denied:search_policy"}': 1,
      // A model-invented tool name never becomes a label value.
      'agent_runs_ended_total{status="stopped",stop_reason="tool_denied:(unregistered)"}': 1,
      agent_steps_total: 3 + 2 + 1,
      'agent_tool_calls_total{tool="get_user_profile",outcome="ok"}': 1,
      'agent_tool_calls_total{tool="get_user_profile",outcome="error"}': 1,
      'agent_tool_calls_total{tool="get_user_billing",outcome="error"}': 1,
      'agent_tool_calls_total{tool="search_policy",outcome="denied"}': 1,
      'agent_tool_calls_total{tool="(unregistered)",outcome="denied"}': 1,
      // LLM latency per attempt: 6 decisions answered, and one attempt before them got a 429.
      'agent_llm_request_duration_seconds_count{outcome="ok"}': 6,
      'agent_llm_request_duration_seconds_count{outcome="retryable_error"}': 1,
      'agent_llm_request_duration_seconds_bucket{le="+Inf",outcome="ok"}': 6,
      'agent_llm_tokens_total{kind="prompt"}': 6 * 100,
      'agent_llm_tokens_total{kind="completion"}': 6 * 20,
      // Cost accounting: every attempt that reported usage (the 429 reported none).
      'agent_llm_attempts_charged_total{outcome="ok"}': 6,
      'agent_llm_charged_tokens_total{kind="prompt"}': 6 * 100,
      'agent_llm_charged_tokens_total{kind="completion"}': 6 * 20,
      // Each decision read its view from the workflow that scheduled it on this worker (no Query);
      // the attempt after the 429 found it taken and asked by the model_view Query.
      'agent_model_view_reads_total{via="handoff"}': 6,
      'agent_model_view_reads_total{via="query"}': 1,
    };
    assert.deepEqual(Object.fromEntries(Object.keys(expected).map((k) => [k, samples.get(k)])), expected);
    assert.ok((samples.get('agent_llm_request_duration_seconds_sum{outcome="ok"}') ?? 0) > 0);
    // gpt-4.1-mini's default price: 100 prompt tokens at $0.40/Mtok + 20 completion at $1.60/Mtok, six times.
    const cost = samples.get('agent_llm_cost_usd_total{outcome="ok"}') ?? 0;
    assert.ok(Math.abs(cost - 6 * 0.000072) < 1e-12, `cost ${cost}`);
    assert.doesNotMatch(text, /delete_everything/);

    // The SDK runtime's own metrics come through the same endpoint, named by Prometheus conventions:
    // counters end in _total, durations are in seconds and say so.
    const sdkTypes = [...text.matchAll(/^# TYPE (temporal_\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    const listed = sdkTypes.map(([name, type]) => `${name} ${type}`).join('\n');
    assert.match(text, /^temporal_workflow_completed_total\{[^}]*\}\s+\d+/m, listed);
    assert.match(text, /^temporal_activity_execution_latency_seconds_bucket\{/m, listed);
    assert.match(text, /^temporal_workflow_task_schedule_to_start_latency_seconds_bucket\{/m, listed);
    for (const [name, type] of sdkTypes) {
      if (type === 'counter') assert.match(name, /_total$/, `counter ${name}`);
      assert.doesNotMatch(name, /_latency$|_milliseconds/, `${name}: a duration without its unit, or not in seconds`);
    }
    assert.match(text, /^process_cpu_user_seconds_total /m);

    assert.equal((await fetch(new URL('/nope', metricsUrl))).status, 404);
  });

  it('answers /healthz with 200 while the worker runs, 503 when it does not (the container health check)', async () => {
    const health = await fetch(new URL('/healthz', metricsUrl));
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok\n');
    // The same server for a worker that is not (or no longer) running.
    let running = false;
    const registry = new Registry();
    const server = await startMetricsServer({
      registry: () => registry,
      port: 0,
      host: '127.0.0.1',
      isRunning: () => running,
    });
    try {
      assert.equal((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status, 503);
      running = true;
      assert.equal((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status, 200);
    } finally {
      await server.close();
    }
  });

  it('a second worker on a taken port keeps working and says its metrics are disabled', async () => {
    const port = new URL(metricsUrl).port;
    const second = fixture.startWorker({ AGENT_METRICS_PORT: port });
    try {
      await second.ready;
      await eventually('the warning', () =>
        second.output().includes(`metrics endpoint disabled: cannot listen on 127.0.0.1 port ${port} (EADDRINUSE)`)
          ? true
          : undefined,
      );
    } finally {
      await second.stop();
    }
  });

  it('listens on loopback only by default, and on every interface when AGENT_METRICS_HOST=0.0.0.0', async () => {
    const port = Number(new URL(metricsUrl).port);
    assert.equal(await reachable(port), false, 'the default worker answered on a non-loopback address');
    const open = fixture.startWorker({ AGENT_METRICS_PORT: '0', AGENT_METRICS_HOST: '0.0.0.0' });
    try {
      await open.ready;
      const url = await eventually('its metrics URL', () => /metrics=(http:\/\/\S+\/metrics)/.exec(open.output())?.[1]);
      assert.equal(await reachable(Number(new URL(url).port)), true, 'AGENT_METRICS_HOST=0.0.0.0 was not reachable');
    } finally {
      await open.stop();
    }
  });
});

/**
 * Whether the endpoint on `port` answers on an address of this machine that is not loopback; on a
 * machine with none, whether its listening socket is bound to every interface (/proc/net/tcp).
 */
async function reachable(port: number): Promise<boolean> {
  const outward = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a !== undefined && !a.internal && a.family === 'IPv4');
  if (outward) {
    try {
      return (await fetch(`http://${outward.address}:${port}/healthz`, { signal: AbortSignal.timeout(5_000) })).ok;
    } catch {
      return false;
    }
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const listening = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[3] === '0A' && cols[1]?.endsWith(`:${hexPort}`));
  assert.ok(listening.length > 0, `nothing listens on port ${port}`);
  return listening.some((cols) => cols[1]!.startsWith('00000000:'));
}
