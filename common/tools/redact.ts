// Data minimisation: fields a tool marks as sensitive (dot paths into its observation data, `*`
// for any key or array index) are replaced before the data reaches the model or a log line. The
// observation itself keeps them (the history is encrypted at rest when a codec key is configured).
// Pure and deterministic: used by the workflow (decision payload) and by activities (logs).
import { specOf } from './index';
import type { ToolSpec } from './tool';
import type { Observation } from '../types';

export const REDACTED = '[redacted]';

/** Sensitive paths of an observation: what its tool's spec declares plus what the tool marked. */
export function sensitivePaths(
  observation: Pick<Observation, 'tool' | 'sensitive'>,
  registry: Readonly<Record<string, ToolSpec>>,
): string[] {
  const spec = specOf(registry, observation.tool);
  const paths = [...(spec?.sensitive ?? []), ...(observation.sensitive ?? [])];
  return [...new Set(paths)];
}

/**
 * A copy of `data` with every value at `paths` replaced by "[redacted]", and the concrete paths
 * that were replaced (so the reader knows a field was withheld, not missing).
 */
export function redactPaths(data: unknown, paths: readonly string[]): { data: unknown; redacted: string[] } {
  if (paths.length === 0 || typeof data !== 'object' || data === null) return { data, redacted: [] };
  const copy = JSON.parse(JSON.stringify(data)) as unknown;
  const redacted: string[] = [];
  for (const path of paths) {
    const segments = path.split('.').filter((s) => s.length > 0);
    if (segments.length > 0) redactAt(copy, segments, [], redacted);
  }
  return { data: copy, redacted: [...new Set(redacted)].sort() };
}

function redactAt(node: unknown, segments: string[], at: string[], out: string[]): void {
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  const has = (key: string) => Object.prototype.hasOwnProperty.call(record, key);
  // `user.ssn` also names a flat key "user.ssn" (and "user" → "ssn.x" …): each run of segments
  // joined by dots is tried as one key.
  for (let take = 1; take <= segments.length; take++) {
    const joined = segments.slice(0, take);
    if (take > 1 && joined.includes('*')) break;
    const head = joined.join('.');
    const rest = segments.slice(take);
    const keys = head === '*' ? Object.keys(record) : has(head) ? [head] : [];
    for (const key of keys) {
      if (rest.length === 0) {
        record[key] = REDACTED;
        out.push([...at, key].join('.'));
      } else {
        redactAt(record[key], rest, [...at, key], out);
      }
    }
  }
}
