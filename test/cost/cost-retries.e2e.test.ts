// The dollar budget under retries, cancels and deadlines, end to end: a worker process pricing a
// made-up model (AGENT_PRICES_FILE), the scripted model failing after paid work, the run cut off
// while a retry hangs. Prices: prompt tokens free, $0.002 a completion token, so a decision's
// worst case (512 completion tokens, $1.024) does not depend on the prompt's size.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { byStep, final, noMessage } from '../../offline-model/scripted-replies';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { cancelRun, runResult } from '../../client/agent-client';
import type { AgentResult } from '../../common/types';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const { PendingActivityState } = temporal.api.enums.v1;

const MODEL = 'spend-test-model';
const pricesDir = mkdtempSync(path.join(tmpdir(), 'cost-retries-e2e-'));
const PRICES_FILE = path.join(pricesDir, 'prices.json');
writeFileSync(PRICES_FILE, JSON.stringify({ [MODEL]: { input_usd_per_mtok: 0, output_usd_per_mtok: 2000 } }));

const fixture = agentFixture({
  queue: 'cost-retries',
  workerEnv: { AGENT_PRICES_FILE: PRICES_FILE, OPENAI_MODEL: MODEL, AGENT_METRICS_PORT: '0' },
  setup: async () => {
    metricsUrl = await eventually(
      'the metrics URL in the worker log',
      () => /metrics=(http:\/\/\S+\/metrics)/.exec(fixture.worker.output())?.[1],
    );
  },
});
let metricsUrl: string;

const exec = promisify(execFile);
function temporalCli(args: string[]) {
  const cli = process.env.TEMPORAL_CLI_PATH;
  assert.ok(cli, 'TEMPORAL_CLI_PATH is set by `npm test`');
  return exec(cli, [...args, '--address', fixture.env.address, '--namespace', fixture.env.namespace]);
}

/** The worker's charged dollars for failed attempts so far (Prometheus text format). */
async function failedUsdCharged(): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text.split('\n').find((l) => l.startsWith('agent_llm_cost_usd_total{outcome="failed"}'));
  return line ? Number(line.split(/\s+/)[1]) : 0;
}

const attemptRows = (result: AgentResult) =>
  result.usage.attempts?.map((a) => [a.step, a.attempt, a.outcome, a.completion_tokens]);

/** A paid failure: an HTTP 500 whose body reports 10 completion tokens ($0.02). */
const paidFailure = (headers: Record<string, string> = {}): Reply => ({
  status: 500,
  headers,
  body: {
    error: {
      message: 'scripted LLM: HTTP 500 after partial work',
      type: 'server_error',
      usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 },
    },
  },
});

/** Resolves when the run's decision waits, on the server, for its second attempt (the retry backoff). */
const inBackoff = (handle: WorkflowHandle) =>
  eventually('the decision waiting between two attempts', async () => {
    const pending = (await handle.describe()).raw.pendingActivities?.[0];
    return pending?.attempt === 2 && pending.state === PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
      ? pending
      : undefined;
  });

describe('every attempt is reserved against what is left', () => {
  it('a retry that cannot fit is not sent: budget_exhausted:usd, one paid attempt', async () => {
    // $1.20 pays for one 512-token attempt ($1.024); what is left ($0.176, 88 tokens) does not
    // pay for the smallest useful cap (128), so the retries are never sent.
    const { result, requests } = await fixture.run(byStep({ 1: noMessage({ completion_tokens: 512 }) }), {
      budget: { max_usd: 1.2 },
    });
    assert.equal(result.stop_reason, 'budget_exhausted:usd', JSON.stringify(result.usage));
    assert.equal(requests.length, 1);
    assert.equal(requests[0]!.body.max_completion_tokens, 512);
    assert.equal(result.usage.cost_usd, 1.024);
    assert.deepEqual(attemptRows(result), [[1, 1, 'failed', 512]]);
    assert.equal(result.usage.llm_calls, 1);
  });

  it('a retry that fits only in part is sent with its completion cap lowered to what is left', async () => {
    // $1.50: attempt 1 reserves 512 tokens and is charged $1.024; $0.476 is left, 238 tokens.
    const { result, requests } = await fixture.run(
      byStep({ 1: [noMessage({ completion_tokens: 512 }), final('Short answer.')] }),
      { budget: { max_usd: 1.5 } },
    );
    assert.equal(result.stop_reason, 'success', JSON.stringify(result.usage));
    assert.deepEqual(
      requests.map((r) => r.body.max_completion_tokens),
      [512, 238],
    );
    assert.equal(result.usage.cost_usd, 1.024 + 0.04);
    assert.ok(result.usage.cost_usd! <= 1.5);
  });

  it('a paid 5xx that reports its usage beside the error, as a 200 does, is charged and reserved against too', async () => {
    // Before, usage at the top of an error body was dropped with the rest of the body: 7 calls
    // of 512 tokens ($7.168 billed) against $1.50, no cost in the result, the run cut off at max_seconds.
    const besideTheError: Reply = {
      status: 500,
      body: {
        error: { message: 'scripted LLM: HTTP 500 after partial work', type: 'server_error' },
        usage: { prompt_tokens: 0, completion_tokens: 512, total_tokens: 512 },
      },
    };
    const { result, requests } = await fixture.run(byStep({ 1: besideTheError }), {
      budget: { max_usd: 1.2 },
      llm_max_attempts: 20,
    });
    assert.equal(result.stop_reason, 'budget_exhausted:usd', JSON.stringify(result.usage));
    assert.equal(requests.length, 1);
    assert.equal(result.usage.cost_usd, 1.024);
    assert.deepEqual(attemptRows(result), [[1, 1, 'failed', 512]]);
  });
});

describe('a decision cut off by a cancel or a deadline keeps its charges', () => {
  it('cancelled while a retry hangs: the paid first attempt is in the result and the metrics', async () => {
    const before = await failedUsdCharged();
    const { id, handle } = await fixture.start(byStep({ 1: [paidFailure(), { hang: true }] }), {
      budget: { max_usd: 5 },
    });
    await fixture.llm.waitFor((r) => r.workflowId === id && fixture.llm.requests(id).length === 2, 30_000);
    await cancelRun(fixture.client, id, 'stuck on a retry');
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'cancelled');
    assert.deepEqual(attemptRows(result), [[1, 1, 'failed', 10]]);
    assert.equal(result.usage.cost_usd, 0.02);
    assert.equal(result.usage.llm_calls, 1);
    assert.equal(result.usage.charged_attempts, 1);
    const charged = await eventually('the charge in the metrics', async () => {
      const now = await failedUsdCharged();
      return now > before ? now : undefined;
    });
    assert.equal(Math.round((charged - before) * 1e9) / 1e9, 0.02);
  });

  it('cut off by max_seconds while a retry hangs: the paid first attempt is in the result', async () => {
    const { id, result } = await fixture.run(byStep({ 1: [paidFailure(), { hang: true }] }), {
      budget: { max_usd: 5, max_seconds: 8 },
    });
    assert.equal(result.stop_reason, 'max_seconds');
    assert.equal(fixture.llm.requests(id).length, 2);
    assert.deepEqual(attemptRows(result), [[1, 1, 'failed', 10]]);
    assert.equal(result.usage.cost_usd, 0.02);
    assert.equal(result.usage.llm_calls, 1);
  });

  it('cancelled between two attempts (a 30 s Retry-After): the paid first attempt is in the result', async () => {
    const { id, handle } = await fixture.start(
      byStep({ 1: [paidFailure({ 'retry-after': '30' }), final('never asked')] }),
      { budget: { max_usd: 5 } },
    );
    await inBackoff(handle);
    await cancelRun(fixture.client, id, 'stuck between retries');
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'cancelled');
    assert.equal(fixture.llm.requests(id).length, 1);
    assert.deepEqual(attemptRows(result), [[1, 1, 'failed', 10]]);
    assert.equal(result.usage.cost_usd, 0.02);
    assert.equal(result.usage.llm_calls, 1);
  });

  it('cut off by max_seconds between two attempts: the paid first attempt is in the result', async () => {
    const { id, result } = await fixture.run(
      byStep({ 1: [paidFailure({ 'retry-after': '30' }), final('never asked')] }),
      { budget: { max_usd: 5, max_seconds: 5 } },
    );
    assert.equal(result.stop_reason, 'max_seconds');
    assert.equal(fixture.llm.requests(id).length, 1);
    assert.deepEqual(attemptRows(result), [[1, 1, 'failed', 10]]);
    assert.equal(result.usage.cost_usd, 0.02);
  });

  it("hostile llm_attempt_charged Signals through Temporal's CLI are dropped; the run is unharmed", async () => {
    const { id, handle } = await fixture.start(byStep({ 1: { hang: true } }), { budget: { max_usd: 5 } });
    await fixture.llm.waitFor((r) => r.workflowId === id, 30_000);
    const charge = { step: 1, attempt: 1, outcome: 'failed', prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.5 };
    const hostile: string[] = [
      'x',
      null,
      [charge],
      { ...charge, cost_usd: -5 },
      { ...charge, cost_usd: 1e12 },
      { ...charge, step: 2 },
      { ...charge, attempt: 0 },
      { ...charge, attempt: 14 }, // beyond llm_max_attempts (3) + 10 Temporal attempts
      { ...charge, attempt: 1.5 },
      { ...charge, outcome: 'ok' },
      { ...charge, prompt_tokens: -1 },
      { ...charge, completion_tokens: 1e300 },
      { ...charge, cost_usd: '0.5' },
      { ...charge, extra: 1 },
      { ...charge, step: undefined },
    ].map((input) => JSON.stringify(input));
    hostile.push(`{"__proto__":{"cost_usd":0.5},"step":1,"attempt":1,"outcome":"failed"}`, '{"constructor":{}}');
    for (const input of hostile) {
      await temporalCli(['workflow', 'signal', '--workflow-id', id, '--name', 'llm_attempt_charged', '--input', input]);
    }
    await cancelRun(fixture.client, id, 'after hostile signals');
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'cancelled');
    assert.equal(result.usage.cost_usd ?? 0, 0);
    assert.equal(result.usage.llm_calls, 0);
    assert.equal(result.usage.attempts?.length ?? 0, 0);
    const events = (await handle.fetchHistory()).events ?? [];
    assert.equal(events.filter((e) => e.workflowExecutionSignaledEventAttributes).length, hostile.length);
    assert.equal(events.filter((e) => e.workflowTaskFailedEventAttributes).length, 0);
  });
});
