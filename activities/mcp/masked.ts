// The one masking step between an MCP server and everything else: whatever a server answers (a
// tool listing, a call's result, a lookup's answer) and every error of a request to it passes
// here before any activity reads it, so a server that echoes what it received (a header's token in
// a tool's description or schema, in a result, in an error page) puts no secret into history, a
// decide input or a model request. It runs before anything cuts text short: a secret cut in two
// would no longer match.
//
// A secret is masked in every form a server may echo it in: the whole value and each
// whitespace-separated part of 6+ characters ("Bearer X" → X too), and each of those JSON-escaped
// (a `/` sent back as `\/`). Text that is JSON is masked after parsing, on every string, key and
// number, and written back as JSON: an escape cannot hide a secret, and masking never turns JSON
// into text that no longer parses (a number equal to a secret becomes the string "[secret]").
import { SECRET_MASK, scrubSecrets, secretsFromEnv } from '../secrets';
import type { McpConnection } from './transport';
import { connectionSecrets } from './transport';

/** What the worker holds as secrets when it talks to this server: the connection's values and its own. */
export function mcpSecrets(connection: McpConnection, env: NodeJS.ProcessEnv = process.env): string[] {
  return [...connectionSecrets(connection, env), ...secretsFromEnv(env)];
}

/** The scheme word of an Authorization value is no secret (masking "Bearer" everywhere would ruin text). */
const AUTH_SCHEMES = /^(bearer|basic|digest|token|apikey)$/i;

/** Every form of the secrets a server may echo: whole, each part of 6+ characters, and JSON-escaped. */
export function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    for (const form of [secret, ...secret.split(/\s+/)]) {
      if (form.length < 6 || AUTH_SCHEMES.test(form)) continue;
      forms.add(form);
      forms.add(JSON.stringify(form).slice(1, -1));
      forms.add(form.replace(/\//g, '\\/'));
      forms.add(JSON.stringify(form).slice(1, -1).replace(/\//g, '\\/'));
    }
  }
  return [...forms];
}

/** JSON nested in strings is parsed this deep (a server wrapping JSON in JSON in JSON). */
const MAX_JSON_DEPTH = 4;

/** `text` parsed when it is a JSON object, array or string (JSON wrapped in a string), else undefined. */
export function parsedJson(text: string): object | string | undefined {
  const start = text.trimStart()[0];
  if (start !== '{' && start !== '[' && start !== '"') return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return (typeof value === 'object' && value !== null) || typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `value` with every secret masked in each string (JSON text parsed first), key and number, at any depth. */
export function maskedValue<T>(value: T, secrets: readonly string[]): T {
  const forms = secretForms(secrets);
  if (forms.length === 0) return value;
  const numbers = new Set(forms.filter((f) => /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(f)));
  const text = (s: string, depth: number): string => {
    const parsed = depth < MAX_JSON_DEPTH ? parsedJson(s) : undefined;
    if (parsed !== undefined) {
      const masked = walk(parsed, depth + 1);
      const again = JSON.stringify(masked);
      // Unchanged: the server's own text, as it wrote it.
      return again === JSON.stringify(parsed) ? s : again;
    }
    return scrubSecrets(s, forms);
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return text(v, depth);
    if (typeof v === 'number') return numbers.has(String(v)) ? SECRET_MASK : v;
    if (Array.isArray(v)) return v.map((inner) => walk(inner, depth));
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [scrubSecrets(k, forms), walk(inner, depth)]));
    return v;
  };
  return walk(value, 0) as T;
}

/** The error with every secret masked in its message, stack, data and causes (it goes into history). */
export function maskedError(err: unknown, secrets: readonly string[], depth = 0): unknown {
  if (!(err instanceof Error) || depth > 5) return err;
  const forms = secretForms(secrets);
  err.message = scrubSecrets(err.message, forms);
  if (err.stack) err.stack = scrubSecrets(err.stack, forms);
  const withData = err as Error & { data?: unknown };
  if (withData.data !== undefined) withData.data = maskedValue(withData.data, secrets);
  if (err.cause !== undefined) err.cause = maskedError(err.cause, secrets, depth + 1);
  return err;
}
