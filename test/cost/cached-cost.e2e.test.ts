// Prompt caching, end to end: a worker process pricing every attempt (AGENT_PRICES_FILE with a
// cached-input price), the scripted model reporting usage.prompt_tokens_details.cached_tokens as
// OpenAI does, the real CLI showing the cached tokens and the dollars charged at the cached price.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { byStep, final, profile } from '../../offline-model/scripted-replies';
import type { AgentResult } from '../../common/types';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

const pricesDir = mkdtempSync(path.join(tmpdir(), 'cached-cost-e2e-'));
const PRICES_FILE = path.join(pricesDir, 'prices.json');
// $0.001 a prompt token, $0.0001 a cached one, $0.002 a completion token.
writeFileSync(
  PRICES_FILE,
  JSON.stringify({
    'gpt-4.1-mini': { input_usd_per_mtok: 1000, cached_input_usd_per_mtok: 100, output_usd_per_mtok: 2000 },
  }),
);

const fixture = agentFixture({ queue: 'cached-cost', workerEnv: { AGENT_PRICES_FILE: PRICES_FILE } });

describe('cached prompt tokens', () => {
  it('are counted in usage and charged at the cached price (result, status, -o json)', async () => {
    const usage = {
      prompt_tokens: 1000,
      completion_tokens: 20,
      total_tokens: 1020,
      prompt_tokens_details: { cached_tokens: 800 },
    };
    const { id, result } = await fixture.run(byStep({ 1: profile(42, { usage }), 2: final('Done.', { usage }) }));
    assert.equal(result.stop_reason, 'success');
    // Each decision: 200 prompt tokens at $0.001, 800 cached at $0.0001, 20 completion at $0.002 = $0.32
    // (every prompt token at the input price would be $1.04).
    assert.equal(result.usage.cost_usd, 0.64);
    assert.equal(result.usage.prompt_tokens, 2000);
    assert.equal(result.usage.cached_prompt_tokens, 1600);
    assert.deepEqual(
      result.usage.attempts?.map((a) => [a.cached_prompt_tokens, a.cost_usd]),
      [
        [800, 0.32],
        [800, 0.32],
      ],
    );

    const shown = await runCli(fixture.env, ['result', id]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /2040 tokens \(2000 prompt, 1600 of them cached \+ 40 completion\)/);
    assert.match(shown.stdout, /\$0\.6400/);
    const status = await runCli(fixture.env, ['status', id]);
    assert.match(status.stdout, /tokens: +2040 \(no token budget\), 2 LLM calls, 1600 prompt tokens cached/);
    const json = await runCli(fixture.env, ['result', id, '-o', 'json']);
    assert.equal((JSON.parse(json.stdout) as AgentResult).usage.cached_prompt_tokens, 1600);
  });
});
