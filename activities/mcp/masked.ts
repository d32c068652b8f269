// The one masking step between an MCP server and everything else: whatever a server answers (a
// tool listing, a call's result, a lookup's answer) and every error of a request to it passes
// here before any activity reads it, so a server that echoes what it received (a header's token in
// a tool's description or schema, in a result, in an error page) verbatim puts no secret into
// history, a decide input or a model request. It runs before anything cuts text short: a secret
// cut in two would no longer match.
//
// A secret is masked in the forms a server may echo it verbatim: the whole value and each
// whitespace-separated part of 6+ characters ("Bearer X" → X too), in any letter case, with any of
// its characters written as a \uXXXX, \xXX or JSON escape or an HTML entity, inside plain text or
// JSON. Text that is JSON is masked after parsing, on every string, key and number, and written
// back as JSON; a number token equal to a numeric secret becomes the string "[secret]" before
// parsing (a 20-digit number would parse to a different value). A server that transforms a value
// (base64, hex, reversed, cut short) is not caught: give header secrets only to servers trusted
// with them (docs/security.md).
import { SECRET_MASK, scrubSecrets, secretsFromEnv } from '../secrets';
import type { McpConnection } from './transport';
import { connectionSecrets } from './transport';

/** What the worker holds as secrets when it talks to this server: the connection's values and its own. */
export function mcpSecrets(connection: McpConnection, env: NodeJS.ProcessEnv = process.env): string[] {
  return [...connectionSecrets(connection, env), ...secretsFromEnv(env)];
}

/** The scheme word of an Authorization value is no secret (masking "Bearer" everywhere would ruin text). */
const AUTH_SCHEMES = /^(bearer|basic|digest|token|apikey)$/i;

/** The secrets to look for: each whole and each part of 6+ characters (escapes and case: scrubSecrets). */
export function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    for (const form of [secret, ...secret.split(/\s+/)]) {
      if (form.length < 6 || AUTH_SCHEMES.test(form)) continue;
      forms.add(form);
    }
  }
  return [...forms];
}

const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** JSON text with each number token equal to a numeric secret written as the string "[secret]". */
export function numbersMasked(json: string, numbers: ReadonlySet<string>): string {
  if (numbers.size === 0) return json;
  return json.replace(/"(?:[^"\\]|\\[\s\S])*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (token) =>
    token.startsWith('"') || !numbers.has(token) ? token : JSON.stringify(SECRET_MASK),
  );
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
  const numbers = new Set(forms.filter((f) => NUMBER.test(f)));
  // A number already parsed (by the SDK) is compared as a number: 20 digits parse imprecisely.
  const numeric = new Set([...numbers].map(Number));
  const text = (s: string, depth: number): string => {
    const prepared = depth < MAX_JSON_DEPTH ? numbersMasked(s, numbers) : s;
    const parsed = depth < MAX_JSON_DEPTH ? parsedJson(prepared) : undefined;
    if (parsed !== undefined) {
      const masked = walk(parsed, depth + 1);
      const again = JSON.stringify(masked);
      // Unchanged: the server's own text, as it wrote it.
      return prepared === s && again === JSON.stringify(parsed) ? s : again;
    }
    return scrubSecrets(s, forms);
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return text(v, depth);
    if (typeof v === 'number') return numbers.has(String(v)) || numeric.has(v) ? SECRET_MASK : v;
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
