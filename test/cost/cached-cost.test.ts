// Prompt caching in the cost ledger: prompt tokens the provider served from its cache
// (usage.prompt_tokens_details.cached_tokens) count when 0 ≤ cached ≤ prompt (else 0), charged at the
// model's cached price (its input price when the table has none), and counted in the run's usage.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { addTokens, EMPTY_USAGE, roundUsd } from '../../common/cost/budget';
import type { AttemptCharge } from '../../common/cost/budget';
import { attemptCost, chargeAttempts } from '../../common/cost/cost';
import type { ModelPrice } from '../../common/cost/cost';
import { boundedOutput } from '../../activities/decide/decide';
import { formatUsage } from '../../cli/format';
import { DEFAULT_PRICES, loadPrices } from '../../runtime/prices';

const priceArb: fc.Arbitrary<ModelPrice> = fc.record(
  {
    input_usd_per_mtok: fc.double({ min: 0, max: 1000, noNaN: true }),
    output_usd_per_mtok: fc.double({ min: 0, max: 1000, noNaN: true }),
    cached_input_usd_per_mtok: fc.double({ min: 0, max: 1000, noNaN: true }),
  },
  { requiredKeys: ['input_usd_per_mtok', 'output_usd_per_mtok'] },
);
const count = fc.integer({ min: 0, max: 10_000_000 });
/** What a server may report as cached: anything, including more than the prompt, negatives, junk. */
const cachedArb = fc.oneof(count, fc.integer({ min: -1000, max: -1 }), fc.double(), fc.constant(undefined));

/** The price before caching was known: every prompt token at the input price. */
const uncachedCost = (prompt: number, completion: number, price: ModelPrice) =>
  roundUsd((prompt * price.input_usd_per_mtok + completion * price.output_usd_per_mtok) / 1e6);

describe('cached prompt tokens are priced at the cached price', () => {
  it('OpenAI list prices: cached input at a quarter (gpt-4.1) or half (gpt-4o) of the input price', () => {
    assert.equal(DEFAULT_PRICES['gpt-4.1']!.cached_input_usd_per_mtok, 0.5);
    assert.equal(DEFAULT_PRICES['gpt-4.1-mini']!.cached_input_usd_per_mtok, 0.1);
    assert.equal(DEFAULT_PRICES['gpt-4.1-nano']!.cached_input_usd_per_mtok, 0.025);
    assert.equal(DEFAULT_PRICES['gpt-4o']!.cached_input_usd_per_mtok, 1.25);
    assert.equal(DEFAULT_PRICES['gpt-4o-mini']!.cached_input_usd_per_mtok, 0.075);
    assert.equal(DEFAULT_PRICES['o4-mini']!.cached_input_usd_per_mtok, 0.275);
    // 1M prompt tokens, 800k of them cached, on gpt-4.1: 200k at $2/M + 800k at $0.50/M = $0.80.
    const tokens = { prompt_tokens: 1_000_000, completion_tokens: 0, cached_prompt_tokens: 800_000 };
    assert.equal(attemptCost(tokens, DEFAULT_PRICES['gpt-4.1']!), 0.8);
  });

  it('property: never negative, never more than uncached, the old figure when nothing is cached', () => {
    fc.assert(
      fc.property(count, count, cachedArb, priceArb, (prompt, completion, cached, price) => {
        const cost = attemptCost(
          { prompt_tokens: prompt, completion_tokens: completion, cached_prompt_tokens: cached as number },
          price,
        );
        assert.ok(cost >= 0);
        const old = uncachedCost(prompt, completion, price);
        assert.equal(attemptCost({ prompt_tokens: prompt, completion_tokens: completion }, price), old);
        assert.equal(
          attemptCost({ prompt_tokens: prompt, completion_tokens: completion, cached_prompt_tokens: 0 }, price),
          old,
        );
        // Without a cached price, cached tokens cost what the input price says.
        const { cached_input_usd_per_mtok: _, ...plain } = price;
        const noCachedPrice = attemptCost(
          { prompt_tokens: prompt, completion_tokens: completion, cached_prompt_tokens: cached as number },
          plain,
        );
        assert.ok(Math.abs(noCachedPrice - old) <= 1e-9);
        if ((price.cached_input_usd_per_mtok ?? Infinity) <= price.input_usd_per_mtok) assert.ok(cost <= old + 1e-9);
      }),
    );
  });

  it('property: the usage the server reports, read bounded: 0 ≤ cached ≤ prompt, in the output and the run usage', () => {
    fc.assert(
      fc.property(count, count, cachedArb, (prompt, completion, cached) => {
        const usage = {
          prompt_tokens: prompt,
          completion_tokens: completion,
          total_tokens: prompt + completion,
          prompt_tokens_details: { cached_tokens: cached },
        };
        const out = boundedOutput('{}', 'm', usage).usage;
        const read = out.cached_prompt_tokens ?? 0;
        assert.ok(Number.isSafeInteger(read) && read >= 0 && read <= out.prompt_tokens);
        if (typeof cached === 'number' && Number.isSafeInteger(cached) && cached >= 0)
          // `+ 0` makes a reported -0 (JSON allows it) the 0 it is read as: strict equal tells them apart.
          assert.equal(read, (cached <= prompt ? cached : 0) + 0);
        const added = addTokens(EMPTY_USAGE, out);
        assert.equal(added.cached_prompt_tokens, read);
        const charge: AttemptCharge = { step: 1, attempt: 1, outcome: 'ok', ...out, cost_usd: 0 };
        const charged = chargeAttempts(chargeAttempts(EMPTY_USAGE, [charge]), [charge]);
        assert.equal(charged.cached_prompt_tokens, 2 * read);
        assert.ok(charged.cached_prompt_tokens! <= charged.prompt_tokens);
      }),
    );
  });

  it('usage shows the cached prompt tokens', () => {
    const usage = { ...EMPTY_USAGE, llm_calls: 1, prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020 };
    assert.match(
      formatUsage({ ...usage, cached_prompt_tokens: 800 }),
      /1020 tokens \(1000 prompt, 800 of them cached \+ 20 completion\)/,
    );
    assert.match(formatUsage(usage), /1020 tokens \(1000 prompt \+ 20 completion\)/);
  });

  it('AGENT_PRICES_FILE: cached_input_usd_per_mtok is optional (the input price then), and checked', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'prices-'));
    const file = path.join(dir, 'prices.json');
    writeFileSync(
      file,
      JSON.stringify({
        cached: { input_usd_per_mtok: 1, cached_input_usd_per_mtok: 0.1, output_usd_per_mtok: 2 },
        plain: { input_usd_per_mtok: 1, output_usd_per_mtok: 2 },
      }),
    );
    const table = loadPrices({ AGENT_PRICES_FILE: file });
    assert.equal(table.cached!.cached_input_usd_per_mtok, 0.1);
    assert.equal(table.plain!.cached_input_usd_per_mtok, undefined);
    const tokens = { prompt_tokens: 1_000_000, completion_tokens: 0, cached_prompt_tokens: 1_000_000 };
    assert.equal(attemptCost(tokens, table.plain!), 1);
    assert.equal(attemptCost(tokens, table.cached!), 0.1);
    writeFileSync(
      file,
      JSON.stringify({ m: { input_usd_per_mtok: 1, output_usd_per_mtok: 2, cached_input_usd_per_mtok: -1 } }),
    );
    assert.throws(
      () => loadPrices({ AGENT_PRICES_FILE: file }),
      (err: Error) =>
        err.message === `AGENT_PRICES_FILE ${file}: "m": cached_input_usd_per_mtok must be a number from 0 to 1000000`,
    );
  });
});
