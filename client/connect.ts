// The one place that turns settings into a Temporal client, so the CLI, the demo, the tests and the
// worker all read and write payloads the same way: encrypted whenever a codec key is configured
// (client/codec/keyring.ts), plain JSON otherwise.
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { EncryptionCodec, NoKeyCodec } from './codec/encryption-codec';
import { keyringFromEnv } from './codec/keyring';
import { connectionOptions } from './temporal-env';
import type { TemporalEnv } from './temporal-env';

/** The codec configured in the environment, or undefined when no key is set. Throws CodecConfigError. */
export function codecFromEnv(processEnv: NodeJS.ProcessEnv = process.env): EncryptionCodec | undefined {
  const keyring = keyringFromEnv(processEnv);
  return keyring ? new EncryptionCodec(keyring) : undefined;
}

/**
 * For Worker.create and new Client: payload encryption (and encoded failure messages) when a key is
 * set; otherwise plain payloads, and a clear error if an encrypted one is met.
 */
export function agentDataConverter(processEnv: NodeJS.ProcessEnv = process.env): DataConverter {
  const codec = codecFromEnv(processEnv);
  if (!codec) return { payloadCodecs: [new NoKeyCodec()] };
  return { payloadCodecs: [codec], failureConverterPath: require.resolve('./codec/failure-converter') };
}

/** A client on an existing connection, with the data converter from the environment. */
export function newClient(connection: Connection, namespace: string, processEnv: NodeJS.ProcessEnv = process.env): Client {
  return new Client({ connection, namespace, dataConverter: agentDataConverter(processEnv) });
}

/** Connects to env.address and returns a client for env.namespace; close it with client.connection.close(). */
export async function createClient(env: TemporalEnv, processEnv: NodeJS.ProcessEnv = process.env): Promise<Client> {
  const dataConverter = agentDataConverter(processEnv); // a bad key config fails before we connect
  const connection = await Connection.connect(connectionOptions(env));
  return new Client({ connection, namespace: env.namespace, dataConverter });
}

/** One line for startup logs: whether payloads are encrypted and with which key id (never the key). */
export function describeCodec(processEnv: NodeJS.ProcessEnv = process.env): string {
  const keyring = keyringFromEnv(processEnv);
  if (!keyring) return 'payload encryption off (no AGENT_CODEC_KEYS or AGENT_CODEC_KEY_FILE)';
  return `payload encryption on (active key id ${keyring.activeKeyId}, ${keyring.keys.size} key(s) can decode)`;
}
