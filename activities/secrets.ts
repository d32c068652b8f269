// Secrets (the LLM API key, codec keys and tokens) live in the worker's environment only. Anything
// that might carry one into a failure message, a log line or the history (an error body that
// echoes the Authorization header, a proxy URL with credentials) goes through here first.
import { SECRET_ENV_NAMES } from '../runtime/env-vars';
import { SECRET_MASK, maskSecretSpans } from './secret-spans';

export { SECRET_MASK };

/** Environment variables whose values are secrets; their values are masked wherever text leaves the worker. */
export const SECRET_ENV_VARS: readonly string[] = [...SECRET_ENV_NAMES, 'TEMPORAL_API_KEY'];

/** Secret values from the environment, split so each codec key is masked on its own too. */
export function secretsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const values: string[] = [];
  for (const name of SECRET_ENV_VARS) {
    const value = env[name]?.trim();
    if (!value) continue;
    values.push(value);
    if (name === 'AGENT_CODEC_KEYS') {
      for (const entry of value.split(',')) {
        const key = entry.slice(entry.indexOf(':') + 1).trim();
        if (key) values.push(key);
      }
    }
  }
  return values;
}

/**
 * Masks every known secret value (also escaped, entity-encoded or in other case: secret-spans.ts),
 * bearer tokens, OpenAI-style keys and URL credentials. Values shorter than 6 characters are not
 * treated as secrets (masking "a" everywhere would ruin text).
 */
export function scrubSecrets(text: string, secrets: readonly string[] = []): string {
  return maskSecretSpans(text, secrets)
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}/gi, `$1 ${SECRET_MASK}`)
    .replace(/\bsk-[A-Za-z0-9_-]{6,}/g, SECRET_MASK)
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]*:[^/\s@]*@/gi, `$1${SECRET_MASK}@`);
}

/** A URL fit for a log line: user and password replaced. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username) parsed.username = '***';
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}
