// The MCP masking step (activities/mcp/masked.ts) against a server that echoes a header's secret in
// any form (adversary findings 2 and 3): the whole value or the token after "Bearer", JSON-escaped
// (`/` as `\/`), inside JSON nested in a JSON string, as a key, as a number, in an error. Whatever
// comes out, parsed as the activity parses it, holds neither the secret nor any part of it, and
// JSON stays JSON.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { maskedError, maskedValue } from '../../activities/mcp/masked';

const TOKEN_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+=._-'.split('');
const token = fc.array(fc.constantFrom(...TOKEN_CHARS), { minLength: 8, maxLength: 40 }).map((c) => c.join(''));
/** A header value: the bare token, or a scheme and the token. */
const headerValue = fc.tuple(fc.constantFrom('', 'Bearer ', 'Basic ', 'Token '), token);

/** The ways a server may echo the token: each gives the text of a result's one text item. */
const echoes: Record<string, (t: string) => string> = {
  bare: (t) => `you sent ${t} to me`,
  json: (t) => JSON.stringify({ seen: t }),
  slashEscaped: (t) => JSON.stringify({ seen: t }).replace(/\//g, '\\/'),
  unicodeEscaped: (t) =>
    `{"seen":"${[...t].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"}`,
  nested: (t) => JSON.stringify({ outer: JSON.stringify({ inner: [t] }) }),
  jsonInString: (t) => JSON.stringify(JSON.stringify({ seen: t })),
  key: (t) => JSON.stringify({ [t]: 1 }),
  nestedKey: (t) => JSON.stringify({ a: { b: JSON.stringify({ [t]: true }) } }),
};

/** Every string in the value, JSON inside strings parsed (and its keys), as the activity and a model would read it. */
function readable(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') {
    out.push(value);
    try {
      readable(JSON.parse(value) as unknown, out);
    } catch {
      // plain text
    }
  } else if (Array.isArray(value)) for (const v of value) readable(v, out);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      readable(v, out);
    }
  else if (typeof value === 'number') out.push(String(value));
  return out;
}

describe('MCP masking (property)', () => {
  it('no echo of a header secret, in any form, survives into what the activity reads', () => {
    fc.assert(
      fc.property(headerValue, fc.constantFrom(...Object.keys(echoes)), ([scheme, t], how) => {
        const secret = `${scheme}${t}`;
        const answer = { content: [{ type: 'text', text: echoes[how]!(t) }], structuredContent: { echoed: t } };
        const masked = maskedValue(answer, [secret]);
        for (const text of readable(masked)) assert.ok(!text.includes(t), `${how}: ${text}`);
        const err = maskedError(new Error(`server said: ${echoes[how]!(t)}`), [secret]) as Error;
        for (const text of readable([err.message, err.stack])) assert.ok(!text.includes(t), `error ${how}: ${text}`);
      }),
      { numRuns: 300 },
    );
  });

  it('a secret echoed as a number keeps the JSON parseable, its other fields intact (finding 3)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100_000, max: 2 ** 40 }), (n) => {
        const text = JSON.stringify({ ssn: '111-22-3333', num: n, list: [n, 'x'] });
        const masked = maskedValue(text, [String(n)]);
        const parsed = JSON.parse(masked) as { ssn: string; num: unknown; list: unknown[] };
        assert.equal(parsed.ssn, '111-22-3333');
        assert.equal(parsed.num, '[secret]');
        assert.deepEqual(parsed.list, ['[secret]', 'x']);
        // The same JSON wrapped in a JSON string: still JSON inside JSON after masking.
        const wrapped = JSON.parse(JSON.parse(maskedValue(JSON.stringify(text), [String(n)])) as string) as {
          num: unknown;
        };
        assert.equal(wrapped.num, '[secret]');
      }),
    );
  });

  it('leaves text with no secret in it as the server wrote it', () => {
    const text = '{ "a" : 1,\n "b": "c" }';
    assert.equal(maskedValue(text, ['tokSECRETabc123xyz']), text);
    assert.equal(maskedValue('Bearer of news', ['Bearer tokSECRETabc123xyz']), 'Bearer of news');
  });
});
