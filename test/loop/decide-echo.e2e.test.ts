// An LLM endpoint that echoes the worker's API key in its answer (adversary finding 4): the decide
// activity's output goes into the history and the answer into the result, so it is scrubbed of the
// worker's secrets first, as its failures already were.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { final, malformed } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { allText } from '../helpers/history-scan';

// Not `sk-...` shaped: the exact value is masked, not only the well-known token shapes.
const API_KEY = 'advLLMkeyQWERTY123456';

const fixture = agentFixture({ queue: 'decide-echo', workerEnv: { OPENAI_API_KEY: API_KEY } });
const jsonFixture = agentFixture({
  queue: 'decide-echo-json',
  workerEnv: { OPENAI_API_KEY: API_KEY, AGENT_LLM_TOOL_MODE: 'json' },
});

/** The key as JSON \\u escapes: JSON.parse gives the key back, a raw-text search does not find it. */
const escaped = (s: string) => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

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

// Second adversary, finding 2b: in json mode the answer is JSON text, scrubbed before it is parsed;
// a key written as \u escapes (and in capitals) came out of the parse as plaintext.
describe('a json-mode answer that echoes the API key escaped', () => {
  it('puts no secret into the history or the result', async () => {
    const content = `{"kind":"final","answer":"The key is ${escaped(API_KEY)}, ${escaped('sk-' + API_KEY)}, ${API_KEY.toUpperCase()}"}`;
    const run = await jsonFixture.run([malformed(content)]);
    assert.equal(run.result.stop_reason, 'success', JSON.stringify(run.result.trace));
    const result = JSON.stringify(run.result);
    assert.match(result, /The key is \[secret\]/, 'the answer is kept, the key masked');
    assert.ok(!result.toLowerCase().includes(API_KEY.toLowerCase()), 'the key is not in the result');
    const leaked = allText(await run.handle.fetchHistory()).filter((text) =>
      text.toLowerCase().includes(API_KEY.toLowerCase()),
    );
    assert.deepEqual(leaked, [], 'the key is not in the history');
  });
});
