// The PayloadCodec that encrypts every payload the worker and the clients send to Temporal:
// AES-256-GCM over the whole serialised payload (metadata and data), with a fresh 96-bit IV per
// payload. The key id travels in the metadata so a rotated-out key still decodes old histories.
// Runs outside the workflow sandbox (worker main thread, clients, codec server).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
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

export class EncryptionCodec implements PayloadCodec {
  private readonly encodingBytes = utf8(ENCRYPTED_ENCODING);

  constructor(private readonly keyring: Keyring) {}

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
    return payloads.map((payload) => {
      // Payloads written before encryption was turned on stay readable.
      if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
      const keyId = text(payload.metadata?.[KEY_ID_METADATA]);
      if (!keyId) throw new PayloadDecryptError(`encrypted payload has no ${KEY_ID_METADATA} metadata`);
      const key = this.keyring.keys.get(keyId);
      if (!key) {
        throw new PayloadDecryptError(
          `payload was encrypted with key "${keyId}", which this process does not have (add it to AGENT_CODEC_KEYS or the key file)`,
        );
      }
      const plain = decrypt(key, keyId, payload.data ?? new Uint8Array());
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    });
  }
}

/**
 * Installed where no key is configured: payloads go out as they are, and an encrypted payload
 * coming back fails with a message that says what to configure (instead of "Unknown encoding").
 */
export class NoKeyCodec implements PayloadCodec {
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads;
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    for (const payload of payloads) {
      if (text(payload.metadata?.encoding) === ENCRYPTED_ENCODING) {
        const keyId = text(payload.metadata?.[KEY_ID_METADATA]) ?? '?';
        throw new PayloadDecryptError(
          `payloads are encrypted (key "${keyId}") but no codec key is configured: set AGENT_CODEC_KEYS or AGENT_CODEC_KEY_FILE as for the worker`,
        );
      }
    }
    return payloads;
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

function utf8(s: string): Uint8Array {
  return Buffer.from(s, 'utf8');
}

function text(bytes: Uint8Array | null | undefined): string | undefined {
  return bytes ? Buffer.from(bytes).toString('utf8') : undefined;
}
