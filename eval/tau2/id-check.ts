// The check of issue 30's claim "the model's view is the whole run": for every ground-truth call a
// model makes, each identifier among its arguments (an order, item, product, payment method or user
// id) that the run showed the model earlier (in any earlier decision request of the run) must be in
// the request that makes the call. An identifier shown once and missing at the call is one a real
// model could not have used: it would guess it, or read the record again. Pure: it reads the
// recorded request bodies and the calls answered to them.

/** The argument names whose values are identifiers in τ²'s retail tools. */
export const IDENTIFIER_ARGS: readonly string[] = [
  'order_id',
  'item_id',
  'item_ids',
  'new_item_ids',
  'product_id',
  'payment_method_id',
  'user_id',
];

/** One decision request of a run, in the order the server received them. */
export interface DecisionRecord {
  /** The request body as sent (JSON text): what the model read. */
  text: string;
  /** The call the model answered with, when it was a tool call of the ground truth. */
  call?: { name: string; args: Record<string, unknown> };
}

/** An identifier the run had shown the model that the request making the call did not carry. */
export interface MissingIdentifier {
  /** 0-based index of the request among the run's decisions. */
  request: number;
  tool: string;
  arg: string;
  id: string;
}

/** The identifiers among a call's arguments, with the argument each came from (sorted, distinct). */
export function identifiersOf(args: Record<string, unknown>): Array<{ arg: string; id: string }> {
  const found = new Map<string, { arg: string; id: string }>();
  for (const arg of IDENTIFIER_ARGS) {
    const value = args[arg];
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) if (typeof v === 'string' && v !== '') found.set(v, { arg, id: v });
  }
  return [...found.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Whether `text` carries `id` as a whole token (an item id inside a longer number does not count). */
export function mentions(text: string, id: string): boolean {
  let at = text.indexOf(id);
  while (at >= 0) {
    const before = text[at - 1];
    const after = text[at + id.length];
    if (!isIdChar(before) && !isIdChar(after)) return true;
    at = text.indexOf(id, at + 1);
  }
  return false;
}

function isIdChar(c: string | undefined): boolean {
  return c !== undefined && /[0-9A-Za-z_]/.test(c);
}

/** The identifiers the run had shown the model before a call and that the call's request lacks. */
export function missingIdentifiers(decisions: readonly DecisionRecord[]): MissingIdentifier[] {
  const missing: MissingIdentifier[] = [];
  decisions.forEach((d, i) => {
    if (!d.call) return;
    for (const { arg, id } of identifiersOf(d.call.args)) {
      if (mentions(d.text, id)) continue;
      if (decisions.slice(0, i).some((earlier) => mentions(earlier.text, id)))
        missing.push({ request: i, tool: d.call.name, arg, id });
    }
  });
  return missing;
}
