// The decide activity's fetch moves the usage an error body reports beside its error into the
// error object, the only part of the body the openai client keeps; other bodies pass unchanged.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { errorUsageFetch, withUsageInError } from '../../activities/decide/error-usage-fetch';

const usage = { prompt_tokens: 3, completion_tokens: 512, total_tokens: 515 };

describe('usage beside an error', () => {
  it('is moved into the error object', () => {
    const body = JSON.stringify({ error: { message: 'boom', type: 'server_error' }, usage });
    assert.deepEqual(JSON.parse(withUsageInError(body)), {
      error: { message: 'boom', type: 'server_error', usage },
      usage,
    });
  });

  it('leaves every other body as it was', () => {
    for (const body of [
      JSON.stringify({ error: { message: 'boom', usage: { completion_tokens: 1 } }, usage }),
      JSON.stringify({ error: { message: 'no usage' } }),
      JSON.stringify({ usage }), // no error object: the client's message is the body text
      JSON.stringify({ error: 'a string', usage }),
      JSON.stringify({ error: [1], usage }),
      JSON.stringify({ error: {}, usage: 'many' }),
      JSON.stringify([{ error: {}, usage }]),
      'not json',
      '',
    ])
      assert.equal(withUsageInError(body), body);
  });

  it('rewrites only JSON error answers, keeping their status and headers', async () => {
    const answer =
      (status: number, body: string, type = 'application/json') =>
      () =>
        Promise.resolve(
          new Response(body, { status, headers: { 'content-type': type, 'retry-after': '7', 'content-length': '1' } }),
        );
    const body = JSON.stringify({ error: { message: 'boom' }, usage });
    const failed = await errorUsageFetch(answer(503, body))('http://127.0.0.1/');
    assert.equal(failed.status, 503);
    assert.equal(failed.headers.get('retry-after'), '7');
    assert.equal(failed.headers.get('content-length'), null);
    assert.deepEqual(((await failed.json()) as { error: { usage: unknown } }).error.usage, usage);
    const ok = await errorUsageFetch(answer(200, body))('http://127.0.0.1/');
    assert.equal(await ok.text(), body);
    const text = await errorUsageFetch(answer(500, body, 'text/plain'))('http://127.0.0.1/');
    assert.equal(await text.text(), body);
  });
});
