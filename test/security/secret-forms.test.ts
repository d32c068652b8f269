// Second adversary, finding 2a: a server echoed a header secret \u- or \x-escaped inside plain
// text, in capitals, as HTML entities, or a 20-digit numeric secret as a raw JSON number (which
// parses to another value). Each verbatim form is masked (activities/secret-spans.ts,
// activities/mcp/masked.ts); transformations (base64, hex, reversed, a prefix) are not claimed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { maskedValue } from '../../activities/mcp/masked';
import { scrubSecrets } from '../../activities/secrets';

const CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+=._-'.split('');
const secret = fc.array(fc.constantFrom(...CHARS), { minLength: 8, maxLength: 40 }).map((c) => c.join(''));

const hex = (c: string, width: number) => c.charCodeAt(0).toString(16).padStart(width, '0');
/** How one character of the secret may be written. */
const charForms: Array<(c: string) => string> = [
  (c) => c,
  (c) => c.toUpperCase(),
  (c) => c.toLowerCase(),
  (c) => `\\u${hex(c, 4)}`,
  (c) => `\\u${hex(c, 4).toUpperCase()}`,
  (c) => `\\x${hex(c, 2)}`,
  (c) => `&#${c.charCodeAt(0)};`,
  (c) => `&#x${hex(c, 2)};`,
  (c) => (c === '/' ? '\\/' : c),
];

/** The secret with each character written in one of the forms (mixed within one echo). */
const spelled = fc
  .tuple(secret, fc.array(fc.nat(charForms.length - 1), { minLength: 40, maxLength: 40 }))
  .map(([s, how]) => ({ s, text: [...s].map((c, i) => charForms[how[i]!]!(c)).join('') }));

/** What a reader gets back: escapes and entities decoded, lower case. */
function decoded(text: string): string {
  return text
    .replace(/\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})/g, (_, u?: string, x?: string) =>
      String.fromCharCode(parseInt((u ?? x)!, 16)),
    )
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCharCode(Number(d)))
    .replace(/&#x([0-9a-fA-F]+);/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\\//g, '/')
    .toLowerCase();
}

describe('secret forms (property)', () => {
  it('a secret spelled with escapes, entities and any case, in plain text or a JSON string, is masked', () => {
    fc.assert(
      fc.property(spelled, fc.string(), fc.string(), ({ s, text }, before, after) => {
        const plain = `${before} key=${text} ${after}`;
        const out = scrubSecrets(plain, [s]);
        assert.ok(!decoded(out).includes(s.toLowerCase()), out);
        assert.ok(out.includes('[secret]'));
        // In plain text that is not wholly JSON, from an MCP server (finding 2a's uesc={"t":"\u0074…"}).
        const mcp = maskedValue({ content: [{ type: 'text', text: `uesc={"t":"${text}"} ${after}` }] }, [s]);
        assert.ok(!decoded(JSON.stringify(mcp)).includes(s.toLowerCase()), JSON.stringify(mcp));
        // Inside JSON text: still JSON after masking.
        const json = `{"t":"${text.replace(/"/g, '\\"')}","n":1}`;
        const masked = maskedValue(json, [s]);
        assert.equal((JSON.parse(masked) as { n: number }).n, 1);
        assert.ok(!decoded(masked).includes(s.toLowerCase()), masked);
      }),
      { numRuns: 400 },
    );
  });

  it('text without the secret is left as it was written, escapes included', () => {
    fc.assert(
      fc.property(secret, fc.string(), (s, text) => {
        fc.pre(!decoded(text).includes(s.toLowerCase()) && !/sk-|bearer|basic|:\/\//i.test(text));
        assert.equal(scrubSecrets(text, [s]), text);
      }),
    );
    assert.equal(scrubSecrets('a \\u0041 &amp; &#66; \\x43', ['tokSECRETabc123']), 'a \\u0041 &amp; &#66; \\x43');
  });

  it('a numeric secret written as a raw JSON number is masked, however imprecisely it parses', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 10n ** 15n, max: 10n ** 30n }), (n) => {
        const key = String(n);
        const text = `{"n":${key},"t":"ok","list":[${key},2]}`;
        const masked = maskedValue({ content: [{ type: 'text', text }] }, [key]);
        const inner = JSON.parse(masked.content[0]!.text) as { n: unknown; t: string; list: unknown[] };
        assert.deepEqual(inner, { n: '[secret]', t: 'ok', list: ['[secret]', 2] });
        // A number the SDK already parsed (structured content) is compared as a number.
        const structured = maskedValue({ structuredContent: { n: Number(key) } }, [key]);
        assert.deepEqual(structured, { structuredContent: { n: '[secret]' } });
      }),
    );
    // The adversary's value: parsed, it read 98765432109876540000.
    const masked = maskedValue('{"n":98765432109876543210,"t":"ok"}', ['98765432109876543210']);
    assert.equal(masked, '{"n":"[secret]","t":"ok"}');
  });
});
