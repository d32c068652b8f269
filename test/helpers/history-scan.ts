// Reading a history the way someone with database or UI access would: every string and every
// byte field, and the payloads found in it.
import type { Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

/** All strings and byte fields (as UTF-8) anywhere in a proto object tree. */
export function allText(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (Array.isArray(value)) for (const v of value) allText(v, out);
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) allText(v, out);
  return out;
}

/** Every Payload in a proto object tree, with the field path that holds it. */
export function allPayloads(
  value: unknown,
  at = '',
  out: Array<{ at: string; payload: Payload }> = [],
): Array<{ at: string; payload: Payload }> {
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return out;
  const record = value as Record<string, unknown>;
  if (
    record.metadata &&
    typeof record.metadata === 'object' &&
    'data' in record &&
    (record.data === null || record.data instanceof Uint8Array)
  ) {
    out.push({ at, payload: record as Payload });
    return out;
  }
  for (const [k, v] of Object.entries(record)) allPayloads(v, at ? `${at}.${k}` : k, out);
  return out;
}

export function metadataText(p: Payload, key: string): string | undefined {
  const v = p.metadata?.[key];
  return v ? Buffer.from(v).toString('utf8') : undefined;
}

/** The activity types a history scheduled, in order (a run's tools, decisions, reconciles). */
export function scheduledActivityTypes(events: temporal.api.history.v1.IHistoryEvent[]): string[] {
  return events.flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}
