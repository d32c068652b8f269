// LLM settings, read from the worker's environment. The API key stays here: it never enters a
// workflow input, a result or the history.

export interface LlmConfig {
  apiKey: string;
  baseURL: string | undefined;
  model: string;
  timeoutMs: number;
}

export function llmConfigFromEnv(env: NodeJS.ProcessEnv = process.env): LlmConfig {
  const timeoutSeconds = Number(env.OPENAI_TIMEOUT_SECONDS ?? '60');
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
    throw new Error(`OPENAI_TIMEOUT_SECONDS must be a positive number, got "${env.OPENAI_TIMEOUT_SECONDS}"`);
  }
  return {
    // OpenAI-compatible local servers often need no key; the client insists on a non-empty one.
    apiKey: env.OPENAI_API_KEY || 'not-set',
    baseURL: env.OPENAI_BASE_URL || undefined,
    model: env.OPENAI_MODEL || 'gpt-4.1-mini',
    timeoutMs: timeoutSeconds * 1000,
  };
}
