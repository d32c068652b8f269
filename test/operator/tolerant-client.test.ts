// The listing's marking codec (client/tolerant-client.ts) against hostile stored payloads: whatever a
// memo payload holds (any key id, any bytes, a tampered tag), decoding never throws; a payload it
// cannot decrypt becomes the marker with a one-line reason that names no key material, and the
// others decode as the real codec decodes them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { EncryptionCodec, KEY_ID_METADATA } from '../../runtime/codec/encryption-codec';
import { keyringFromEnv } from '../../runtime/codec/keyring';
import { MarkingCodec, undecodableReasonOf } from '../../client/tolerant-client';
import { undecodableNote } from '../../cli/run-listing';
import type { RunRow } from '../../cli/run-listing';
import { codecEnv, newKey } from '../helpers/codec';

const K1 = newKey();
const K2 = newKey();
const mine = new EncryptionCodec(keyringFromEnv(codecEnv({ k1: K1 }, 'k1'))!);
const theirs = new EncryptionCodec(keyringFromEnv(codecEnv({ k2: K2 }, 'k2'))!);
const marking = new MarkingCodec([mine]);
const valueOf = async (payload: Payload) => defaultPayloadConverter.fromPayload((await marking.decode([payload]))[0]!);

describe('the listing codec marks what it cannot decode', () => {
  it('a payload under the key it has decodes; one under another key is the marker naming that key id', async () => {
    const [ours] = await mine.encode([defaultPayloadConverter.toPayload({ confirmed: 1 })]);
    const [other] = await theirs.encode([defaultPayloadConverter.toPayload({ confirmed: 1 })]);
    assert.deepEqual(await valueOf(ours!), { confirmed: 1 });
    assert.equal(undecodableReasonOf(await valueOf(ours!)), undefined);
    assert.match(undecodableReasonOf(await valueOf(other!)) ?? '', /key "k2", which this process does not have/);
  });

  it('hostile payloads (any key id, any bytes): never a throw, the marker with a one-line reason, no key material', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 80 }), fc.uint8Array({ maxLength: 200 }), async (keyId, data) => {
        const payload: Payload = {
          metadata: { encoding: Buffer.from('binary/encrypted'), [KEY_ID_METADATA]: Buffer.from(keyId) },
          data,
        };
        const reason = undecodableReasonOf(await valueOf(payload));
        assert.ok(reason, 'marked');
        const row = { undecodable: reason } as RunRow;
        const note = undecodableNote([row])!;
        const control = [...note].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
        assert.ok(!control, `one line: ${JSON.stringify(note)}`);
        assert.ok(!note.includes(K1) && !note.includes(K2));
      }),
      { numRuns: 300 },
    );
  });

  it('a tampered payload under the right key id is marked, not thrown', async () => {
    const [ours] = await mine.encode([defaultPayloadConverter.toPayload({ confirmed: 1 })]);
    const data = Buffer.from(ours!.data!);
    data[data.length - 1] ^= 0xff;
    assert.ok(undecodableReasonOf(await valueOf({ ...ours!, data })));
  });
});
