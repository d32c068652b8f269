// Keeps untrusted model output from bloating the result and the history: anything larger than
// the cap is replaced by a marked, truncated string.
import { stableJson } from '../../common/tools/hash';

export const RAW_ACTION_MAX_CHARS = 2048;

export function boundedRaw(raw: unknown, maxChars = RAW_ACTION_MAX_CHARS): unknown {
  const text = typeof raw === 'string' ? raw : stableJson(raw);
  if (text.length <= maxChars) return raw;
  return { truncated: true, chars: text.length, preview: text.slice(0, maxChars) };
}
