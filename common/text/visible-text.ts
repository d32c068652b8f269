// Text a person must have written (a top-up's reason, who sent it): something a reader can see.
// Spaces, zero-width and format characters, combining marks with no base, controls, private-use
// and unassigned code points, Hangul fillers and the blank braille pattern all print as nothing.

const INVISIBLE = /[\p{C}\p{Z}\p{M}\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800]/gu;

/** Whether `text` has at least one character that shows. */
export function hasVisibleText(text: string): boolean {
  return text.replace(INVISIBLE, '') !== '';
}

/** Whether `text` has a control character (C0, DEL, C1): nothing a one-line record needs. */
export function hasControl(text: string): boolean {
  return /\p{Cc}/u.test(text);
}

/** Controls (C0, DEL, C1) and bidi marks, embeddings, overrides and isolates: they reorder or hide what is shown. */
const DISPLAY_UNSAFE = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

/** `text` for a one-line display a person reads (the Web UI, a list column): unsafe characters become spaces. */
export function displaySafe(text: string): string {
  return text.replace(DISPLAY_UNSAFE, ' ');
}
