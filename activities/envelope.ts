// Every tool result reaches the workflow (and the model) wrapped with its source and size, and
// capped in bytes, so one huge or hostile payload cannot flood the history or the prompt.
import type { Observation } from '../workflows/types';

export const OBSERVATION_MAX_BYTES = 4096;

export function envelope(tool: string, source: string, ok: boolean, data: unknown, maxBytes = OBSERVATION_MAX_BYTES): Observation {
  const json = JSON.stringify(data ?? null);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes <= maxBytes) return { tool, ok, data: data ?? null, source, bytes, truncated: false };
  const preview = Buffer.from(json, 'utf8').subarray(0, maxBytes).toString('utf8');
  return { tool, ok, data: { preview }, source, bytes, truncated: true };
}
