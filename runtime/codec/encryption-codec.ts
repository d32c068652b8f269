// The PayloadCodec that encrypts every payload the worker and the clients send to Temporal:
// AES-256-GCM over the whole serialised payload (metadata and data), with a fresh 96-bit IV per
// payload. The key id travels in the metadata so a rotated-out key still decodes old histories.
// Runs outside the workflow sandbox (worker main thread, clients, codec server).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { undecodablePayload } from '../../common/temporal/undecodable-payload';
import type { Keyring } from './keyring';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A payload this process cannot decrypt (unknown key id, wrong key, tampered bytes). */
export class PayloadDecryptError extends Error {
  override name = 'PayloadDecryptError';
}

/**
 * What decode does with a payload it cannot decrypt. Clients and the codec server `throw` (the
 * caller sees which key is missing). A worker `mark`s it (common/temporal/undecodable-payload.ts): an Update
 * carrying it is rejected, a history payload carrying it still fails the workflow task; `report`
 * gets the reason, so the worker's log says why.
 */
export type Undecodable = { mode: 'throw' } | { mode: 'mark'; report: (reason: string) => void };
const THROW: Undecodable = { mode: 'throw' };

export class EncryptionCodec implements PayloadCodec {
  private readonly encodingBytes = utf8(ENCRYPTED_ENCODING);

  constructor(
    private readonly keyring: Keyring,
    private readonly undecodable: Undecodable = THROW,
  ) {}

  get activeKeyId(): string {
    return this.keyring.activeKeyId;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const keyId = this.keyring.activeKeyId;
    const key = this.keyring.keys.get(keyId)!;
    return payloads.map((payload) => ({
      metadata: { encoding: this.encodingBytes, [KEY_ID_METADATA]: utf8(keyId) },
      data: encrypt(key, keyId, temporal.api.common.v1.Payload.encode(payload).finish()),
    }));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => settle(this.undecodable, () => this.decodeOne(payload)));
  }

  private decodeOne(payload: Payload): Payload {
    // Payloads written before encryption was turned on stay readable.
    if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
    const keyId = text(payload.metadata?.[KEY_ID_METADATA]);
    if (!keyId) throw new PayloadDecryptError(`encrypted payload has no ${KEY_ID_METADATA} metadata`);
    const key = this.keyring.keys.get(keyId);
    if (!key) {
      throw new PayloadDecryptError(
        `payload was encrypted with key "${shownId(keyId)}", which this process does not have (add it to AGENT_CODEC_KEYS or the key file)`,
      );
    }
    const plain = decrypt(key, keyId, payload.data ?? new Uint8Array());
    try {
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    } catch {
      throw new PayloadDecryptError(`payload encrypted with key "${keyId}" decrypts to no payload`);
    }
  }
}

/**
 * Installed where no key is configured: payloads go out as they are, and an encrypted payload
 * coming back fails with a message that says what to configure (instead of "Unknown encoding").
 */
export class NoKeyCodec implements PayloadCodec {
  constructor(private readonly undecodable: Undecodable = THROW) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads;
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) =>
      settle(this.undecodable, () => {
        if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
        const keyId = text(payload.metadata?.[KEY_ID_METADATA]) ?? '?';
        throw new PayloadDecryptError(
          `payloads are encrypted (key "${shownId(keyId)}") but no codec key is configured: set AGENT_CODEC_KEYS or AGENT_CODEC_KEY_FILE as for the worker`,
        );
      }),
    );
  }
}

/** decodeOne's payload; when it cannot decrypt, the error (throw) or the marker (mark). */
function settle(undecodable: Undecodable, decodeOne: () => Payload): Payload {
  try {
    return decodeOne();
  } catch (err) {
    if (!(err instanceof PayloadDecryptError) || undecodable.mode === 'throw') throw err;
    undecodable.report(err.message);
    return undecodablePayload(err.message);
  }
}

// data = iv | ciphertext | tag; the key id is authenticated as associated data, so a payload cannot
// be relabelled to another key id without failing the tag check.
function encrypt(key: Buffer, keyId: string, plain: Uint8Array): Uint8Array {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(utf8(keyId));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

function decrypt(key: Buffer, keyId: string, data: Uint8Array): Uint8Array {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (bytes.length < IV_BYTES + TAG_BYTES)
    throw new PayloadDecryptError(`encrypted payload (key "${keyId}") is too short`);
  const decipher = createDecipheriv(ALGORITHM, key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(utf8(keyId));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new PayloadDecryptError(
      `payload encrypted with key "${keyId}" does not decrypt: wrong key material or tampered data`,
    );
  }
}

/** Any client can write a key id: show it only if it could be one (no newlines, no megabytes in a log line). */
function shownId(keyId: string): string {
  return /^[A-Za-z0-9._-]{1,64}$/.test(keyId) ? keyId : '(not a key id)';
}

function utf8(s: string): Uint8Array {
  return Buffer.from(s, 'utf8');
}

function text(bytes: Uint8Array | null | undefined): string | undefined {
  return bytes ? Buffer.from(bytes).toString('utf8') : undefined;
}
