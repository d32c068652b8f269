// LLM settings, read from the worker's environment. The API key stays here: it never enters a
// workflow input, a result or the history.
import { readEnv } from '../runtime/env-vars';

export interface LlmConfig {
  apiKey: string;
  baseURL: string | undefined;
  model: string;
  timeoutMs: number;
}

export function llmConfigFromEnv(env: NodeJS.ProcessEnv = process.env): LlmConfig {
  return {
    // OpenAI-compatible local servers often need no key; the client insists on a non-empty one.
    apiKey: readEnv('OPENAI_API_KEY', env) ?? 'not-set',
    baseURL: readEnv('OPENAI_BASE_URL', env),
    model: readEnv('OPENAI_MODEL', env),
    timeoutMs: readEnv('OPENAI_TIMEOUT_SECONDS', env) * 1000,
  };
}

/** Why the worker will not start without an LLM: every run would otherwise end llm_error. */
export const MISSING_LLM_MESSAGE =
  'OPENAI_API_KEY is not set: set it, or set OPENAI_BASE_URL for a keyless OpenAI-compatible server';

/**
 * The worker's settings: refuses to start with neither a key nor a base URL (a keyless
 * OpenAI-compatible server is legitimate: the client then gets a placeholder key).
 */
export function requiredLlmConfigFromEnv(env: NodeJS.ProcessEnv = process.env): LlmConfig {
  if (readEnv('OPENAI_API_KEY', env) === undefined && readEnv('OPENAI_BASE_URL', env) === undefined)
    throw new Error(MISSING_LLM_MESSAGE);
  return llmConfigFromEnv(env);
}
