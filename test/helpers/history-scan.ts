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

/**
 * The activity types a history ran, in order (a run's tools, decisions, reconciles): its scheduled
 * activities and its local ones (a read-only tool's marker, recorded when the call ended).
 */
export function scheduledActivityTypes(events: temporal.api.history.v1.IHistoryEvent[]): string[] {
  return events.flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name ?? localActivityType(e);
    return name ? [name] : [];
  });
}

/** The activity type of a local activity's marker (the SDK's own JSON in its `data` detail), else undefined. */
export function localActivityType(e: temporal.api.history.v1.IHistoryEvent): string | undefined {
  const marker = e.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_local_activity') return undefined;
  const data = marker.details?.data?.payloads?.[0]?.data;
  if (!data) return undefined;
  const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string };
  return parsed.activity_type;
}
