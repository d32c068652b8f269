// LLM settings, read from the worker's environment. The API key stays here: it never enters a
// workflow input, a result or the history.
import type { ModelPrice } from '../../common/cost/cost';
import { readEnv } from '../../runtime/env-vars';
import { loadPrices, lookUpPrice } from '../../runtime/prices';

export interface LlmConfig {
  apiKey: string;
  baseURL: string | undefined;
  model: string;
  timeoutMs: number;
  /**
   * The model's price: each attempt's cost is computed with it (runtime/prices.ts). Undefined for
   * a model the table does not know (a local model): its runs' cost is unknown, and a run with a
   * dollar budget is refused (the llm_pricing local activity).
   */
  price: ModelPrice | undefined;
  /** How the model answers: tool calls (`native`, the default) or a JSON object in the content (`json`). */
  toolMode?: 'native' | 'json';
}

/** The value of OPENAI_BASE_URL that starts the scripted offline model (worker/offline-model.ts). */
export const OFFLINE_BASE_URL = 'offline';

/** Throws a one-line error for a prices file it cannot read. */
export function llmConfigFromEnv(env: NodeJS.ProcessEnv = process.env): LlmConfig {
  const model = readEnv('OPENAI_MODEL', env);
  return {
    // OpenAI-compatible local servers often need no key; the client insists on a non-empty one.
    apiKey: readEnv('OPENAI_API_KEY', env) ?? 'not-set',
    baseURL: readEnv('OPENAI_BASE_URL', env),
    model,
    timeoutMs: readEnv('OPENAI_TIMEOUT_SECONDS', env) * 1000,
    price: lookUpPrice(model, loadPrices(env)),
    toolMode: readEnv('AGENT_LLM_TOOL_MODE', env),
  };
}

/** Why the worker will not start without an LLM: every run would otherwise end llm_error. */
export const MISSING_LLM_MESSAGE =
  'OPENAI_API_KEY is not set: set it, or set OPENAI_BASE_URL for a keyless OpenAI-compatible server ' +
  `(OPENAI_BASE_URL=${OFFLINE_BASE_URL}: the scripted offline model of the demo)`;

/**
 * The worker's settings: refuses to start with neither a key nor a base URL (a keyless
 * OpenAI-compatible server is legitimate: the client then gets a placeholder key).
 */
export function requiredLlmConfigFromEnv(env: NodeJS.ProcessEnv = process.env): LlmConfig {
  if (readEnv('OPENAI_API_KEY', env) === undefined && readEnv('OPENAI_BASE_URL', env) === undefined)
    throw new Error(MISSING_LLM_MESSAGE);
  return llmConfigFromEnv(env);
}
