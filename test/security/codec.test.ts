// The payload codec on its own: key configuration, round trips, rotation, tampering. (The
// end-to-end proof against a real server is in encryption.e2e.test.ts.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { defaultPayloadConverter, RawValue } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import {
  EncryptionCodec,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadDecryptError,
} from '../../runtime/codec/encryption-codec';
import { CodecConfigError, keyringFromEnv } from '../../runtime/codec/keyring';
import { agentDataConverter, describeCodec } from '../../runtime/data-converter';
import { undecodableReason } from '../../common/temporal/undecodable-payload';
import { decodedArgument } from '../../common/temporal/undecoded-signal';

const key = () => randomBytes(32).toString('base64');
const K1 = key();
const K2 = key();
const text = (b: Uint8Array | null | undefined) => Buffer.from(b ?? []).toString('utf8');
const payload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);

describe('codec keys from the environment', () => {
  it('no key configured: plain payloads, and a clear error for an encrypted one', async () => {
    assert.equal(keyringFromEnv({}), undefined);
    assert.match(describeCodec({}), /off/);
    const [passThrough] = agentDataConverter({}).payloadCodecs!;
    const plain = payload('x');
    assert.deepEqual(await passThrough!.encode([plain]), [plain]);
    const [encrypted] = await new EncryptionCodec(keyringFromEnv({ AGENT_CODEC_KEYS: `k1:${K1}` })!).encode([plain]);
    await assert.rejects(
      passThrough!.decode([encrypted!]),
      /encrypted \(key "k1"\) but no codec key is configured: set AGENT_CODEC_KEYS/,
    );
  });

  it('one inline key is the active one', () => {
    const ring = keyringFromEnv({ AGENT_CODEC_KEYS: `k1:${K1}` })!;
    assert.equal(ring.activeKeyId, 'k1');
    assert.equal(ring.keys.get('k1')!.length, 32);
    assert.match(describeCodec({ AGENT_CODEC_KEYS: `k1:${K1}` }), /on \(active key id k1, 1 key/);
  });

  it('several inline keys need AGENT_CODEC_ACTIVE_KEY_ID', () => {
    assert.throws(() => keyringFromEnv({ AGENT_CODEC_KEYS: `k1:${K1},k2:${K2}` }), /AGENT_CODEC_ACTIVE_KEY_ID/);
    const ring = keyringFromEnv({ AGENT_CODEC_KEYS: ` k1:${K1} , k2:${K2} `, AGENT_CODEC_ACTIVE_KEY_ID: 'k2' })!;
    assert.equal(ring.activeKeyId, 'k2');
    assert.deepEqual([...ring.keys.keys()], ['k1', 'k2']);
  });

  it('a key file names its active key; the env var may override it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'codec-keys-'));
    const file = path.join(dir, 'keys.json');
    writeFileSync(file, JSON.stringify({ active: 'k1', keys: { k1: K1, k2: K2 } }));
    assert.equal(keyringFromEnv({ AGENT_CODEC_KEY_FILE: file })!.activeKeyId, 'k1');
    assert.equal(keyringFromEnv({ AGENT_CODEC_KEY_FILE: file, AGENT_CODEC_ACTIVE_KEY_ID: 'k2' })!.activeKeyId, 'k2');
  });

  const bad: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
    [
      'a key that is not 32 bytes',
      { AGENT_CODEC_KEYS: `k1:${randomBytes(16).toString('base64')}` },
      /must be 32 bytes/,
    ],
    ['an entry without an id', { AGENT_CODEC_KEYS: K1 }, /not "id:base64key"/],
    ['a key that is not base64', { AGENT_CODEC_KEYS: 'k1:not base64!' }, /not base64/],
    ['a bad key id', { AGENT_CODEC_KEYS: `bad id:${K1}` }, /key id/],
    ['a duplicate id', { AGENT_CODEC_KEYS: `k1:${K1},k1:${K2}` }, /twice/],
    ['an unknown active id', { AGENT_CODEC_KEYS: `k1:${K1}`, AGENT_CODEC_ACTIVE_KEY_ID: 'k9' }, /"k9" is not among/],
    ['an active id without keys', { AGENT_CODEC_ACTIVE_KEY_ID: 'k1' }, /no keys/],
    ['both sources', { AGENT_CODEC_KEYS: `k1:${K1}`, AGENT_CODEC_KEY_FILE: '/x.json' }, /not both/],
    ['a missing key file', { AGENT_CODEC_KEY_FILE: '/nonexistent/keys.json' }, /cannot read/],
  ];
  for (const [what, env, message] of bad) {
    it(`refuses ${what}, without echoing key material`, () => {
      assert.throws(
        () => keyringFromEnv(env),
        (err: unknown) => {
          assert.ok(err instanceof CodecConfigError);
          assert.match(err.message, message);
          for (const secret of [K1, K2]) assert.ok(!err.message.includes(secret), 'the key is not in the message');
          return true;
        },
      );
    });
  }

  it('an active key id that looks like a pasted key is not echoed', () => {
    const pasted = randomBytes(32).toString('base64url');
    assert.throws(
      () => keyringFromEnv({ AGENT_CODEC_KEYS: `k1:${K1}`, AGENT_CODEC_ACTIVE_KEY_ID: pasted }),
      (err: Error) => !err.message.includes(pasted),
    );
  });
});

describe('EncryptionCodec', () => {
  const v1 = new EncryptionCodec(keyringFromEnv({ AGENT_CODEC_KEYS: `k1:${K1}` })!);
  const rotated = new EncryptionCodec(
    keyringFromEnv({ AGENT_CODEC_KEYS: `k1:${K1},k2:${K2}`, AGENT_CODEC_ACTIVE_KEY_ID: 'k2' })!,
  );
  const onlyNew = new EncryptionCodec(keyringFromEnv({ AGENT_CODEC_KEYS: `k2:${K2}` })!);
  const secret = { user: { name: 'Anna' }, billing: { plan: 'pro_monthly' } };

  it('encrypts: no plaintext, binary/encrypted with the key id, and round-trips metadata and data', async () => {
    const original = payload(secret);
    const [encoded] = await v1.encode([original]);
    assert.equal(text(encoded!.metadata!.encoding), ENCRYPTED_ENCODING);
    assert.equal(text(encoded!.metadata![KEY_ID_METADATA]), 'k1');
    assert.ok(!Buffer.from(encoded!.data!).includes('Anna'));
    assert.ok(!Buffer.from(encoded!.data!).includes('json/plain'), 'the original encoding is encrypted too');
    const [decoded] = await v1.decode([encoded!]);
    assert.equal(text(decoded!.metadata!.encoding), 'json/plain');
    assert.deepEqual(defaultPayloadConverter.fromPayload(decoded!), secret);
  });

  it('uses a fresh IV per payload: the same value never encrypts to the same bytes', async () => {
    const [a, b] = await v1.encode([payload(secret), payload(secret)]);
    assert.notDeepEqual(Buffer.from(a!.data!), Buffer.from(b!.data!));
  });

  it('after rotation, new payloads carry the new key id and old ones still decode', async () => {
    const [old] = await v1.encode([payload('before rotation')]);
    const [fresh] = await rotated.encode([payload('after rotation')]);
    assert.equal(text(fresh!.metadata![KEY_ID_METADATA]), 'k2');
    const decoded = await rotated.decode([old!, fresh!]);
    assert.deepEqual(
      decoded.map((p) => defaultPayloadConverter.fromPayload(p)),
      ['before rotation', 'after rotation'],
    );
  });

  it('a key id it does not have is a clear error, not garbage', async () => {
    const [old] = await v1.encode([payload('x')]);
    await assert.rejects(
      onlyNew.decode([old!]),
      (err: unknown) => err instanceof PayloadDecryptError && /key "k1"/.test(err.message),
    );
  });

  it('tampered bytes or a relabelled key id fail the authentication tag', async () => {
    const [encoded] = await rotated.encode([payload(secret)]);
    const flipped = Buffer.from(encoded!.data!);
    const at = flipped.length - 20;
    flipped[at] = flipped[at]! ^ 1;
    await assert.rejects(rotated.decode([{ ...encoded!, data: flipped }]), /does not decrypt/);
    const relabelled = { ...encoded!, metadata: { ...encoded!.metadata, [KEY_ID_METADATA]: Buffer.from('k1') } };
    await assert.rejects(rotated.decode([relabelled]), /does not decrypt/);
  });

  it('passes through payloads written before encryption was on', async () => {
    const plain = payload({ a: 1 });
    const [decoded] = await v1.decode([plain]);
    assert.equal(decoded, plain);
  });
});

describe("a worker's codec marks what it cannot decrypt instead of throwing", () => {
  const reasons: string[] = [];
  const marking = { mode: 'mark' as const, report: (reason: string) => reasons.push(reason) };
  const worker = new EncryptionCodec(keyringFromEnv({ AGENT_CODEC_KEYS: `k1:${K1}` })!, marking);
  const encrypted = (keyId: string, data: Uint8Array): Payload => ({
    metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: Buffer.from(keyId) },
    data,
  });

  it('an unknown key id, random bytes, a bad key id: each its own marker with its reason; good payloads decode', async () => {
    reasons.length = 0;
    const [good] = await worker.encode([payload('fine')]);
    const decoded = await worker.decode([
      encrypted('nope', randomBytes(64)),
      good!,
      encrypted('k1', randomBytes(64)),
      encrypted('k1\nforged log line', randomBytes(8)),
    ]);
    assert.equal(defaultPayloadConverter.fromPayload(decoded[1]!), 'fine');
    const marked = [decoded[0]!, decoded[2]!, decoded[3]!].map((p) => undecodableReason(p));
    assert.match(marked[0]!, /key "nope", which this process does not have/);
    assert.match(marked[1]!, /key "k1" does not decrypt/);
    assert.match(marked[2]!, /key "\(not a key id\)"/);
    assert.deepEqual(reasons, marked, 'each reason reported once, for the log');
    for (const p of [decoded[0]!, decoded[2]!]) {
      assert.equal(p.data!.length, 0, 'the marker carries none of the bytes it replaces');
      // No converter reads the marker: what carries it (an Update, a history payload) fails to convert.
      assert.throws(() => defaultPayloadConverter.fromPayload(p), /Unknown encoding: binary\/undecodable/);
      assert.match(decodedArgument(RawValue.fromPayload(p)) as string, /^its payload cannot be decrypted \(/);
    }
  });

  it('a worker with no key at all marks an encrypted payload too; clients still throw', async () => {
    const [noKey] = agentDataConverter({}, marking).payloadCodecs!;
    const [marker] = await noKey!.decode([encrypted('k1', randomBytes(64))]);
    assert.match(undecodableReason(marker!)!, /no codec key is configured/);
    const [client] = agentDataConverter({ AGENT_CODEC_KEYS: `k1:${K1}` }).payloadCodecs!;
    await assert.rejects(client!.decode([encrypted('nope', randomBytes(64))]), PayloadDecryptError);
  });
});
