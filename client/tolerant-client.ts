// A client that lists runs reading what it can. The SDK decodes every listed run's memo with the
// codec, and one payload encrypted under a key this process lacks fails the whole listing. Here such
// a payload comes back as a marker naming why, so the run is still listed from what needs no key
// (its id, status, times and search attributes, never encrypted) and `agent list` says what it
// could not read. For reading only: nothing is encoded through it but plain payloads.
import { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { PayloadDecryptError } from '../runtime/codec/encryption-codec';

/** The memo value standing for a payload that could not be decoded: `{ [UNDECODABLE_KEY]: reason }`. */
const UNDECODABLE_KEY = '__agent_undecodable__';

/** A client on `client`'s connection and namespace whose codec marks what it cannot decode. */
export function tolerantClient(client: Client): Client {
  return new Client({
    connection: client.connection,
    namespace: client.options.namespace,
    dataConverter: { payloadCodecs: [new MarkingCodec(client.options.loadedDataConverter.payloadCodecs)] },
  });
}

/** Why a decoded memo value could not be read, when it is the marker; else undefined. */
export function undecodableReasonOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const reason = (value as Record<string, unknown>)[UNDECODABLE_KEY];
  return typeof reason === 'string' ? reason : undefined;
}

/** The codecs in order, each payload on its own: one that fails becomes the marker, the rest decode. */
export class MarkingCodec implements PayloadCodec {
  constructor(private readonly codecs: readonly PayloadCodec[]) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads;
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(
      payloads.map(async (payload) => {
        try {
          let out = [payload];
          for (const codec of [...this.codecs].reverse()) out = await codec.decode(out);
          const decoded = out[0]!;
          // The SDK converts the payload next, and one it cannot (another client's memo: an unknown
          // encoding, JSON that does not parse) would fail the whole listing just the same.
          try {
            defaultPayloadConverter.fromPayload(decoded);
          } catch {
            return marker('its payload is in no encoding this process reads, or malformed');
          }
          return decoded;
        } catch (err) {
          // The codec's own words name the missing key id (never the key); anything else, not its text.
          return marker(err instanceof PayloadDecryptError ? err.message : 'the codec could not decode it');
        }
      }),
    );
  }
}

function marker(reason: string): Payload {
  return defaultPayloadConverter.toPayload({ [UNDECODABLE_KEY]: reason });
}
