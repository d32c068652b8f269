// Finds secrets in text the way a reader would decode it: JSON/JS escapes (\u0074, \x74, \/, \")
// and HTML entities (&#116;, &#x74;, &amp;) are decoded, letters compared without case, and the
// span of the original text that spells a secret is replaced whole. So a server or a model that
// echoes a secret escaped, in capitals or half-escaped puts no secret out, and JSON text stays
// JSON (a masked span covers whole escapes and "[secret]" needs no escaping). Transformations
// (base64, hex, reversal, a prefix) are not undone: see docs/security.md.
export const SECRET_MASK = '[secret]';

/** Secrets shorter than this are not masked (masking "a" everywhere would ruin text). */
export const MIN_SECRET_LENGTH = 6;

/** One unit of text: an escape or entity (decoded to one character) or a plain character. */
const UNIT =
  /\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|\\(["\\/bfnrt'])|&#(\d{1,7});?|&#[xX]([0-9a-fA-F]{1,6});?|&(amp|lt|gt|quot|apos);|[\s\S]/g;

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const SIMPLE: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

function decodeUnit(m: RegExpMatchArray): string {
  const [whole, u, x, simple, dec, hex, named] = m;
  const point = (n: number) => (n <= 0x10ffff ? String.fromCodePoint(n) : whole);
  if (u !== undefined) return String.fromCharCode(parseInt(u, 16));
  if (x !== undefined) return String.fromCharCode(parseInt(x, 16));
  if (simple !== undefined) return SIMPLE[simple] ?? simple;
  if (dec !== undefined) return point(parseInt(dec, 10));
  if (hex !== undefined) return point(parseInt(hex, 16));
  if (named !== undefined) return NAMED[named] ?? whole;
  return whole;
}

/** Lower case for ASCII letters only: keeps every index in place. */
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** `text` with every span that decodes to one of `secrets` (any case) replaced by "[secret]". */
export function maskSecretSpans(text: string, secrets: readonly string[]): string {
  const forms = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH).map(asciiLower))];
  if (forms.length === 0 || text.length === 0) return text;
  const units: string[] = [];
  const unitOf: number[] = []; // decoded character index → unit index
  let decoded = '';
  for (const m of text.matchAll(UNIT)) {
    const ch = decodeUnit(m);
    units.push(m[0]);
    for (let i = 0; i < ch.length; i++) unitOf.push(units.length - 1);
    decoded += ch;
  }
  const lower = asciiLower(decoded);
  const hidden = new Uint8Array(units.length);
  let any = false;
  for (const form of forms) {
    for (let i = lower.indexOf(form); i >= 0; i = lower.indexOf(form, i + 1)) {
      for (let j = unitOf[i]!; j <= unitOf[i + form.length - 1]!; j++) hidden[j] = 1;
      any = true;
    }
  }
  if (!any) return text;
  let out = '';
  for (let j = 0; j < units.length; j++) {
    if (!hidden[j]) out += units[j];
    else if (j === 0 || !hidden[j - 1]) out += SECRET_MASK;
  }
  return out;
}
