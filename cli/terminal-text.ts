// Text from the model, tools and other people reaches an operator's terminal. Control characters
// (ESC starts CSI/OSC sequences that recolour, retitle, hide or rewrite output; CR overwrites a
// line) and bidi overrides/isolates (which reorder what is shown against what is there) are
// removed before anything is printed. \n and \t stay: answers have lines.

/** C0 but \t and \n, DEL, C1; bidi marks, embeddings, overrides and isolates. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** The same set, plus line/paragraph separators, for JSON: written as \uXXXX escapes instead. */
const JSON_UNSAFE = /[\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;

/** `text` without control characters (but \n and \t) and bidi controls. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, '');
}

/**
 * JSON.stringify, with what it leaves raw (DEL, C1, bidi controls, U+2028/U+2029) escaped as
 * \uXXXX: lossless, still valid JSON, and inert in a terminal. These characters can only occur
 * inside JSON strings, where an escape means the same character.
 */
export function terminalSafeJson(value: unknown, space?: number): string {
  const text = JSON.stringify(value, null, space) ?? 'null';
  return text.replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
