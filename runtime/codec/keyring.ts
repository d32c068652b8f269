// Where the payload encryption keys come from: the environment or a key file, never the history.
// A keyring holds every key that may still be needed to read old histories, and names the one
// that encrypts new payloads. Error messages name variables and key ids, never key material.
import { readFileSync } from 'node:fs';
import { readEnv } from '../env-vars';

export interface Keyring {
  /** Encrypts every new payload; its id travels in the payload's metadata. */
  activeKeyId: string;
  /** Every key that may decode: the active one and the ones rotated out. */
  keys: ReadonlyMap<string, Buffer>;
}

/** The codec is misconfigured: the process should say so in one line and not start. */
export class CodecConfigError extends Error {
  override name = 'CodecConfigError';
}

export const KEY_BYTES = 32; // AES-256
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * AGENT_CODEC_KEYS="id1:base64key,id2:base64key" (+ AGENT_CODEC_ACTIVE_KEY_ID when there are several), or
 * AGENT_CODEC_KEY_FILE=/path/keys.json with {"active": "id2", "keys": {"id1": "base64", "id2": "base64"}}.
 * Returns undefined when neither is set: payloads are then stored as plain JSON.
 */
export function keyringFromEnv(env: NodeJS.ProcessEnv = process.env): Keyring | undefined {
  const inline = readEnv('AGENT_CODEC_KEYS', env);
  const file = readEnv('AGENT_CODEC_KEY_FILE', env);
  if (inline && file) throw new CodecConfigError('set either AGENT_CODEC_KEYS or AGENT_CODEC_KEY_FILE, not both');
  let keys: Map<string, Buffer>;
  let active = readEnv('AGENT_CODEC_ACTIVE_KEY_ID', env);
  if (inline) {
    keys = parseInlineKeys(inline);
  } else if (file) {
    const parsed = readKeyFile(file);
    keys = parsed.keys;
    active ??= parsed.active;
  } else {
    if (active)
      throw new CodecConfigError(
        'AGENT_CODEC_ACTIVE_KEY_ID is set but no keys are (AGENT_CODEC_KEYS or AGENT_CODEC_KEY_FILE)',
      );
    return undefined;
  }
  if (keys.size === 0) throw new CodecConfigError('the codec key list is empty');
  if (active === undefined) {
    if (keys.size > 1)
      throw new CodecConfigError(
        `${keys.size} codec keys are configured: name the one that encrypts with AGENT_CODEC_ACTIVE_KEY_ID`,
      );
    active = [...keys.keys()][0]!;
  }
  if (!keys.has(active))
    throw new CodecConfigError(`the active codec key "${safeId(active)}" is not among the configured keys`);
  return { activeKeyId: active, keys };
}

function parseInlineKeys(text: string): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  for (const [i, entry] of text.split(',').entries()) {
    const item = entry.trim();
    if (item === '') continue;
    const colon = item.indexOf(':');
    if (colon <= 0) throw new CodecConfigError(`AGENT_CODEC_KEYS entry ${i + 1} is not "id:base64key"`);
    addKey(keys, item.slice(0, colon).trim(), item.slice(colon + 1).trim(), 'AGENT_CODEC_KEYS');
  }
  return keys;
}

function readKeyFile(file: string): { keys: Map<string, Buffer>; active: string | undefined } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CodecConfigError(
      `cannot read AGENT_CODEC_KEY_FILE ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new CodecConfigError(`AGENT_CODEC_KEY_FILE ${file} is not valid JSON`);
  }
  const record = doc as { active?: unknown; keys?: unknown };
  if (
    typeof doc !== 'object' ||
    doc === null ||
    typeof record.keys !== 'object' ||
    record.keys === null ||
    Array.isArray(record.keys)
  ) {
    throw new CodecConfigError(
      `AGENT_CODEC_KEY_FILE ${file} must hold {"active": "<id>", "keys": {"<id>": "<base64 key>"}}`,
    );
  }
  if (record.active !== undefined && typeof record.active !== 'string') {
    throw new CodecConfigError(`AGENT_CODEC_KEY_FILE ${file}: "active" must be a key id`);
  }
  const keys = new Map<string, Buffer>();
  for (const [id, value] of Object.entries(record.keys as Record<string, unknown>)) {
    if (typeof value !== 'string')
      throw new CodecConfigError(`AGENT_CODEC_KEY_FILE ${file}: key "${safeId(id)}" must be a base64 string`);
    addKey(keys, id, value, `AGENT_CODEC_KEY_FILE ${file}`);
  }
  return { keys, active: record.active };
}

function addKey(keys: Map<string, Buffer>, id: string, base64: string, where: string): void {
  if (!KEY_ID.test(id))
    throw new CodecConfigError(`${where}: key id "${safeId(id)}" must be 1-64 of A-Z a-z 0-9 . _ -`);
  if (keys.has(id)) throw new CodecConfigError(`${where}: key id "${id}" appears twice`);
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(base64)) throw new CodecConfigError(`${where}: key "${id}" is not base64`);
  const key = Buffer.from(base64, base64.includes('-') || base64.includes('_') ? 'base64url' : 'base64');
  if (key.length !== KEY_BYTES) {
    throw new CodecConfigError(
      `${where}: key "${id}" must be ${KEY_BYTES} bytes (AES-256), got ${key.length}; make one with: openssl rand -base64 32`,
    );
  }
  keys.set(id, key);
}

/** Ids are not secret, but a mistyped value might be a key pasted in the wrong place: show only short, plain ids. */
function safeId(id: string): string {
  return KEY_ID.test(id) && id.length <= 32 ? id : '(not shown)';
}
