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
