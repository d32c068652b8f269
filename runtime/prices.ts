// The price table: US dollars per million input, cached input and output tokens, per model. The defaults below
// are the providers' list prices when this was written (check yours: prices change); the file
// named by AGENT_PRICES_FILE adds models or overrides these. The worker reads it once at start; a
// model it cannot price runs with its cost unknown, and only a run with a dollar budget is refused
// (the llm_pricing local activity fails it with unpricedModelMessage). Runs never read it: the decide activity prices each
// attempt, and a run with a dollar budget learns its model's price once (the llm_pricing local activity).
import { readFileSync } from 'node:fs';
import type { ModelPrice } from '../common/cost/cost';
import { readEnv } from './env-vars';

export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4.1': { input_usd_per_mtok: 2, cached_input_usd_per_mtok: 0.5, output_usd_per_mtok: 8 },
  'gpt-4.1-mini': { input_usd_per_mtok: 0.4, cached_input_usd_per_mtok: 0.1, output_usd_per_mtok: 1.6 },
  'gpt-4.1-nano': { input_usd_per_mtok: 0.1, cached_input_usd_per_mtok: 0.025, output_usd_per_mtok: 0.4 },
  'gpt-4o': { input_usd_per_mtok: 2.5, cached_input_usd_per_mtok: 1.25, output_usd_per_mtok: 10 },
  'gpt-4o-mini': { input_usd_per_mtok: 0.15, cached_input_usd_per_mtok: 0.075, output_usd_per_mtok: 0.6 },
  'o4-mini': { input_usd_per_mtok: 1.1, cached_input_usd_per_mtok: 0.275, output_usd_per_mtok: 4.4 },
  // The offline demo's scripted model (offline-model/scripted-llm-server.ts) is free.
  'scripted-llm': { input_usd_per_mtok: 0, output_usd_per_mtok: 0 },
};

/** The table: the defaults, with the file's entries over them. Throws one line naming the file and the entry. */
export function loadPrices(env: NodeJS.ProcessEnv = process.env): Record<string, ModelPrice> {
  const file = readEnv('AGENT_PRICES_FILE', env);
  if (!file) return { ...DEFAULT_PRICES };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`AGENT_PRICES_FILE ${file}: cannot read it as JSON (${(err as Error).message.split('\n')[0]})`, {
      cause: err,
    });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new Error(
      `AGENT_PRICES_FILE ${file}: expected {"<model>": {"input_usd_per_mtok": n, "output_usd_per_mtok": n}}`,
    );
  const table: Record<string, ModelPrice> = { ...DEFAULT_PRICES };
  for (const [model, entry] of Object.entries(raw as Record<string, unknown>)) {
    const e = (entry ?? {}) as Record<string, unknown>;
    const ok = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1_000_000;
    if (!ok(e.input_usd_per_mtok) || !ok(e.output_usd_per_mtok))
      throw new Error(
        `AGENT_PRICES_FILE ${file}: "${model.slice(0, 80)}" needs input_usd_per_mtok and output_usd_per_mtok, numbers from 0 to 1000000`,
      );
    // Optional: a model without a cached price is charged its input price for cached tokens.
    if (e.cached_input_usd_per_mtok !== undefined && !ok(e.cached_input_usd_per_mtok))
      throw new Error(
        `AGENT_PRICES_FILE ${file}: "${model.slice(0, 80)}": cached_input_usd_per_mtok must be a number from 0 to 1000000`,
      );
    table[model] = {
      input_usd_per_mtok: e.input_usd_per_mtok as number,
      output_usd_per_mtok: e.output_usd_per_mtok as number,
      ...(e.cached_input_usd_per_mtok !== undefined
        ? { cached_input_usd_per_mtok: e.cached_input_usd_per_mtok as number }
        : {}),
    };
  }
  return table;
}

/** The price of the worker's model; undefined when the table does not know it. */
export function lookUpPrice(model: string, table: Readonly<Record<string, ModelPrice>>): ModelPrice | undefined {
  return Object.prototype.hasOwnProperty.call(table, model) ? table[model] : undefined;
}

/** Why a run with a dollar budget cannot run on an unpriced model, and how to give it a price. */
export function unpricedModelMessage(model: string): string {
  return (
    `no price for model "${model.slice(0, 80)}", so a dollar budget (--max-usd) cannot be kept: add it to a JSON ` +
    `file named by AGENT_PRICES_FILE ({"${model.slice(0, 80)}": {"input_usd_per_mtok": 0.4, "output_usd_per_mtok": 1.6}}); see docs/cost.md`
  );
}
