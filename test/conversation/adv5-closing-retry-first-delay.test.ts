// Broke 2026-12-07 (adversary round), fixed the same day: the first retry of "workflow is closing" waits 85 ms (68-102 ms with
// jitter), not the 50 ms docs/conversations.md promises: the SDK calls delayFunction with attempt 1
// for the first retry, and 50 * 1.7 ** 1 = 85.
// Adversary (docs/conversations.md, "A message sent as the run continues as new": the client
// retries "workflow is closing" after 50 ms, at most 0.5 s apart and about 3 s in all), on the
// retry options as the SDK's interceptor calls them (attempt 1 is the first retry).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closingAwareRetryOptions } from '../../runtime/closing-run-retry';

const CLOSING = { code: 8, details: 'workflow is closing', metadata: undefined } as never;

/** The delays the SDK's interceptor waits for a run that answers "closing" every time. */
function closingDelays(samples: number): number[][] {
  const options = closingAwareRetryOptions();
  return Array.from({ length: samples }, () => {
    const delays: number[] = [];
    for (let attempt = 1; options.retryableDecider(attempt, CLOSING); attempt++)
      delays.push(options.delayFunction(attempt, CLOSING));
    return delays;
  });
}

describe('adv5: the retry of "workflow is closing" as the docs promise it', () => {
  it('at most 0.5 s apart, about 3 s in all', () => {
    for (const delays of closingDelays(200)) {
      assert.ok(Math.max(...delays) <= 500 * 1.2, `a delay of ${Math.max(...delays)} ms`);
      const total = delays.reduce((a, b) => a + b, 0);
      assert.ok(total >= 2000 && total <= 4500, `${total} ms in all`);
    }
  });

  it('the first retry after about 50 ms', () => {
    const firsts = closingDelays(200).map((d) => d[0]!);
    const median = firsts.sort((a, b) => a - b)[100]!;
    assert.ok(median >= 40 && median <= 60, `the first retry waits ${Math.round(median)} ms (median of 200)`);
  });
});
