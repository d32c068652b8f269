// The dollar budget under retries, cancels and deadlines, end to end: a worker process pricing a
// made-up model (AGENT_PRICES_FILE), the scripted model failing after paid work, the run cut off
// while a retry hangs. Prices: prompt tokens free, $0.002 a completion token, so a decision's
// worst case (512 completion tokens, $1.024) does not depend on the prompt's size.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { byStep, final, noMessage, serverErrorWithUsage } from '../scripts/scripted-replies';
import type { Reply } from '../scripts/scripted-llm-server';
import { cancelRun, runResult } from '../client/agent-client';
import type { AgentResult } from '../common/types';
import { agentFixture } from './helpers/agent-fixture';
import { eventually } from './helpers/harness';

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

/** The worker's charged dollars for failed attempts so far (Prometheus text format). */
async function failedUsdCharged(): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text.split('\n').find((l) => l.startsWith('agent_llm_cost_usd_total{outcome="failed"}'));
  return line ? Number(line.split(/\s+/)[1]) : 0;
}

const attemptRows = (result: AgentResult) =>
  result.usage.attempts?.map((a) => [a.step, a.attempt, a.outcome, a.completion_tokens]);

/** A paid failure: an HTTP 500 whose body reports 10 completion tokens ($0.02). */
const paidFailure = (): Reply => serverErrorWithUsage({ prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 });

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
});
