// Stable argument hashing: the same arguments in any key order give the same digest, so loop
// detection and idempotency keys do not depend on how the model happened to order its JSON.
import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';

export function stableJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return '[' + value.map(stableJson).join(',') + ']';
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    return '{' + keys.map((k) => JSON.stringify(k) + ':' + stableJson(record[k])).join(',') + '}';
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
  return JSON.stringify(value);
}

export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}

/** First 12 hex chars of sha256(stableJson(args)): short enough for a trace line, long enough to tell calls apart. */
export function argsHash(args: unknown): string {
  return sha256Hex(stableJson(args ?? {})).slice(0, 12);
}

/** The trace's argument_digest: sha256 of the key-order-free JSON, in full (its first 12 hex digits are args_hash). */
export function argumentDigest(args: unknown): string {
  return `sha256:${sha256Hex(stableJson(args ?? {}))}`;
}

/** Loop detection remembers calls as 16 hex digits of sha256 over the call's signature. */
export function seenCallHash(signature: string): string {
  return /^[0-9a-f]{16}$/.test(signature) ? signature : sha256Hex(signature).slice(0, 16);
}
