// Every tool result reaches the workflow (and the model) wrapped with its source, a trust label and
// its size, and capped in bytes and nesting, so one huge or hostile payload cannot flood the
// history or the prompt. A truncated preview is cut from the redacted data, so it never carries a
// field the tool marked as sensitive.
import { nestedDeeperThan } from '../../common/contract';
import { redactPaths, sensitivePaths } from '../../common/tools/redact';
import { ALL_TOOLS } from '../../domains/index';
import { OBSERVATION_TRUST } from '../../common/types';
import type { Observation } from '../../common/types';

export const OBSERVATION_MAX_BYTES = 4096;
export const OBSERVATION_MAX_DEPTH = 12;

export interface EnvelopeOptions {
  maxBytes?: number;
  /** Extra sensitive paths for this result, on top of what the tool's spec declares. */
  sensitive?: string[];
}

export function envelope(
  tool: string,
  source: string,
  ok: boolean,
  data: unknown,
  options: EnvelopeOptions | number = {},
): Observation {
  const opts = typeof options === 'number' ? { maxBytes: options } : options;
  const maxBytes = opts.maxBytes ?? OBSERVATION_MAX_BYTES;
  const marked = opts.sensitive && opts.sensitive.length > 0 ? { sensitive: [...opts.sensitive] } : {};
  const base = { tool, ok, source, trust: OBSERVATION_TRUST, ...marked };
  const value = data ?? null;

  if (nestedDeeperThan(value, OBSERVATION_MAX_DEPTH)) {
    return {
      ...base,
      data: { preview: `(not shown: nested deeper than ${OBSERVATION_MAX_DEPTH} levels)` },
      bytes: sizeOf(value),
      truncated: true,
    };
  }
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes <= maxBytes) return { ...base, data: value, bytes, truncated: false };
  const { data: shown } = redactPaths(value, sensitivePaths({ tool, ...marked }, ALL_TOOLS));
  const preview = Buffer.from(JSON.stringify(shown), 'utf8').subarray(0, maxBytes).toString('utf8');
  return { ...base, data: { preview }, bytes, truncated: true };
}

/** Serialised size, or 0 when the value cannot even be serialised (absurdly deep). */
function sizeOf(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value), 'utf8');
  } catch {
    return 0;
  }
}
