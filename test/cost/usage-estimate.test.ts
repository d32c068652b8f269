// Unusable usage reports (found by the adversary): an attempt whose server reported a negative, a
// string or an out-of-range token count was charged nothing; a cached count above the prompt was
// believed up to the prompt. Such an attempt is charged its request's estimate, marked estimated,
// and cached tokens above the prompt count 0 (docs/cost.md).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { attemptCost, chargedTokens } from '../../common/cost/cost';
import { boundedOutput } from '../../activities/decide/decide';

const estimate = { prompt_tokens: 500, completion_tokens: 1000 };
const price = { input_usd_per_mtok: 2, cached_input_usd_per_mtok: 0.5, output_usd_per_mtok: 8 };

describe('what an attempt is charged for the usage it reported', () => {
  it('a negative, string or huge prompt count is charged the estimate, never free', () => {
    for (const bad of [-5, '1000', 1e20, 1.5, Number.NaN, {}])
      assert.deepEqual(chargedTokens({ prompt_tokens: bad, completion_tokens: 10 }, estimate), {
        prompt_tokens: 500,
        completion_tokens: 10,
        estimated: true,
      });
    assert.deepEqual(chargedTokens({ prompt_tokens: 7, completion_tokens: -1 }, estimate), {
      prompt_tokens: 7,
      completion_tokens: 1000,
      estimated: true,
    });
  });

  it('no usage is 0; a count missing from a usage is estimated; sound counts are taken as reported', () => {
    assert.deepEqual(chargedTokens({ completion_tokens: 3 }, estimate), {
      prompt_tokens: estimate.prompt_tokens,
      completion_tokens: 3,
      estimated: true,
    });
    assert.deepEqual(chargedTokens(undefined, estimate), { prompt_tokens: 0, completion_tokens: 0 });
    assert.deepEqual(
      chargedTokens(
        { prompt_tokens: 100, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 40 } },
        estimate,
      ),
      { prompt_tokens: 100, completion_tokens: 3, cached_prompt_tokens: 40 },
    );
  });

  it('cached tokens above the prompt count 0: the whole prompt at the input price', () => {
    const tokens = chargedTokens(
      { prompt_tokens: 100, completion_tokens: 0, prompt_tokens_details: { cached_tokens: 101 } },
      estimate,
    );
    assert.deepEqual(tokens, { prompt_tokens: 100, completion_tokens: 0 });
    assert.equal(attemptCost({ prompt_tokens: 100, completion_tokens: 0, cached_prompt_tokens: 101 }, price), 0.0002);
  });

  it('the decision output carries the same counts (the run usage agrees with the charge)', () => {
    const out = boundedOutput('{}', 'm', { prompt_tokens: -1, completion_tokens: 2, total_tokens: 1 }, estimate);
    assert.deepEqual(out.usage, { prompt_tokens: 500, completion_tokens: 2, total_tokens: 502 });
  });

  it('property: any usage is charged at least the reported sound counts, an unusable one its estimate', () => {
    const hostile = fc.oneof(
      fc.integer({ min: 0, max: 1e9 }),
      fc.integer({ min: -1e9, max: -1 }),
      fc.double(),
      fc.constant(1e20),
      fc.string(),
      fc.constant(undefined),
      fc.constant(null),
      fc.anything(),
    );
    const est = fc.record({
      prompt_tokens: fc.integer({ min: 1, max: 1e7 }),
      completion_tokens: fc.integer({ min: 1, max: 1e6 }),
    });
    fc.assert(
      fc.property(hostile, hostile, hostile, est, (prompt, completion, cached, e) => {
        const usage = {
          prompt_tokens: prompt,
          completion_tokens: completion,
          prompt_tokens_details: { cached_tokens: cached },
        };
        const t = chargedTokens(usage, e);
        const sound = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
        // The usage is there: a count missing from it is estimated too (never free).
        for (const [value, got, fallback] of [
          [prompt, t.prompt_tokens, e.prompt_tokens],
          [completion, t.completion_tokens, e.completion_tokens],
        ] as const)
          assert.equal(got, sound(value) ? value : fallback);
        assert.equal(
          t.estimated === true,
          [prompt, completion].some((v) => !sound(v)),
        );
        const c = t.cached_prompt_tokens ?? 0;
        assert.ok(Number.isSafeInteger(c) && c >= 0 && c <= t.prompt_tokens);
        if (!sound(cached) || (cached as number) > t.prompt_tokens || t.estimated) assert.equal(c, 0);
        // Never cheaper than the whole prompt at the cached price.
        assert.ok(attemptCost(t, price) >= 0);
      }),
      { numRuns: 1000 },
    );
  });
  it('a usage that is there but carries no usable count is estimated; no usage at all counts 0', () => {
    const e = { prompt_tokens: 700, completion_tokens: 512 };
    for (const usage of [
      { prompt_tokens: null, completion_tokens: null, total_tokens: 5000 },
      'lots',
      { input_tokens: 5000, output_tokens: 5000 },
      [],
    ]) {
      const t = chargedTokens(usage, e);
      assert.deepEqual([t.prompt_tokens, t.completion_tokens, t.estimated], [700, 512, true], JSON.stringify(usage));
    }
    for (const usage of [undefined, null]) {
      const t = chargedTokens(usage, e);
      assert.deepEqual([t.prompt_tokens, t.completion_tokens, t.estimated], [0, 0, undefined]);
    }
  });
});
