// How payloads are written and read, shared by the worker, the CLI, the demo and the tests:
// encrypted whenever a codec key is configured (runtime/codec/keyring.ts), plain JSON otherwise.
import type { DataConverter } from '@temporalio/common';
import { EncryptionCodec, NoKeyCodec } from './codec/encryption-codec';
import type { Undecodable } from './codec/encryption-codec';
import { keyringFromEnv } from './codec/keyring';

/** The failure converter that encodes failure messages too; compiled into the encrypted workers' workflow bundle. */
export const FAILURE_CONVERTER_PATH = require.resolve('../common/temporal/failure-converter');

/** The codec configured in the environment, or undefined when no key is set. Throws CodecConfigError. */
export function codecFromEnv(
  processEnv: NodeJS.ProcessEnv = process.env,
  undecodable?: Undecodable,
): EncryptionCodec | undefined {
  const keyring = keyringFromEnv(processEnv);
  return keyring ? new EncryptionCodec(keyring, undecodable) : undefined;
}

/**
 * For Worker.create and new Client: payload encryption (and encoded failure messages) when a key is
 * set; otherwise plain payloads, and a clear error if an encrypted one is met. A worker passes
 * `undecodable: mark` so that a payload it cannot decrypt fails only what carries it (an Update is
 * rejected; a history payload still fails its workflow task), not every workflow task of the run.
 */
export function agentDataConverter(
  processEnv: NodeJS.ProcessEnv = process.env,
  undecodable?: Undecodable,
): DataConverter {
  const codec = codecFromEnv(processEnv, undecodable);
  if (!codec) return { payloadCodecs: [new NoKeyCodec(undecodable)] };
  return { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/** One line for startup logs: whether payloads are encrypted and with which key id (never the key). */
export function describeCodec(processEnv: NodeJS.ProcessEnv = process.env): string {
  const keyring = keyringFromEnv(processEnv);
  if (!keyring) return 'payload encryption off (no AGENT_CODEC_KEYS or AGENT_CODEC_KEY_FILE)';
  return `payload encryption on (active key id ${keyring.activeKeyId}, ${keyring.keys.size} key(s) can decode)`;
}
