// An LLM endpoint that echoes the worker's API key in its answer (adversary finding 4): the decide
// activity's output goes into the history and the answer into the result, so it is scrubbed of the
// worker's secrets first, as its failures already were.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { final } from '../testing/scripted-replies';
import { agentFixture } from './helpers/agent-fixture';
import { allText } from './helpers/history-scan';

// Not `sk-...` shaped: the exact value is masked, not only the well-known token shapes.
const API_KEY = 'advLLMkeyQWERTY123456';

const fixture = agentFixture({ queue: 'decide-echo', workerEnv: { OPENAI_API_KEY: API_KEY } });

describe('a model answer that echoes the API key', () => {
  it('puts no secret into the history or the result', async () => {
    const run = await fixture.run([final(`You are on the pro plan. (key ${API_KEY}, sk-${API_KEY})`)]);
    assert.equal(run.result.stop_reason, 'success', JSON.stringify(run.result.trace));
    assert.match(JSON.stringify(run.result), /\[secret\]/, 'the answer is kept, the key masked');
    assert.ok(!JSON.stringify(run.result).includes(API_KEY), 'the key is not in the result');
    const leaked = allText(await run.handle.fetchHistory()).filter((text) => text.includes(API_KEY));
    assert.deepEqual(leaked, [], 'the key is not in the history');
  });
});
