// The codec server as the Web UI and the CLI meet it: a real process (`npm run codec-server`'s
// entry) on a real port. Without a valid token, or from another origin, it decodes nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { EncryptionCodec } from '../../runtime/codec/encryption-codec';
import { keyringFromEnv } from '../../runtime/codec/keyring';
import { SESSION_COOKIE } from '../../codec-server/http-server';
import { DIST } from '../helpers/harness';
import { codecEnv, newKey, newToken, request, startCodecServerProcess, withoutCodec } from '../helpers/codec';
import type { CodecServerProcess } from '../helpers/codec';

const UI = 'http://localhost:8233';
const EVIL = 'http://evil.example';
const K1 = newKey();
const K2 = newKey();
const TOKEN = newToken();
const keys = codecEnv({ k1: K1, k2: K2 }, 'k2');
const codec = new EncryptionCodec(keyringFromEnv(keys)!);
let server: CodecServerProcess;
let encryptedBody: string;

const toJson = (p: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});
const decodeCall = (headers: Record<string, string>, body = encryptedBody) =>
  request(`${server.url}/decode`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
    body,
  });

before(async () => {
  server = await startCodecServerProcess({ ...keys, AGENT_CODEC_TOKEN: TOKEN, AGENT_CODEC_CORS_ORIGIN: UI });
  const encoded = await codec.encode([
    defaultPayloadConverter.toPayload({ user: { name: 'Anna' }, plan: 'pro_monthly' }),
  ]);
  encryptedBody = JSON.stringify({ payloads: encoded.map(toJson) });
});

after(async () => {
  await server?.stop();
});

describe('codec server: authorization', () => {
  it('decodes with the bearer token', async () => {
    const res = await decodeCall({ authorization: `Bearer ${TOKEN}` });
    assert.equal(res.status, 200);
    const [p] = JSON.parse(res.body).payloads;
    assert.equal(Buffer.from(p.metadata.encoding, 'base64').toString(), 'json/plain');
    assert.deepEqual(JSON.parse(Buffer.from(p.data, 'base64').toString()), {
      user: { name: 'Anna' },
      plan: 'pro_monthly',
    });
  });

  for (const [what, headers] of [
    ['no Authorization header', {}],
    ['a wrong token', { authorization: `Bearer ${newToken()}` }],
    ['a prefix of the token', { authorization: `Bearer ${TOKEN.slice(0, 10)}` }],
    ['the token in another scheme', { authorization: `Basic ${TOKEN}` }],
    ['a forged session cookie', { cookie: `${SESSION_COOKIE}=${TOKEN}` }],
  ] as Array<[string, Record<string, string>]>) {
    it(`refuses ${what} with 401 and decodes nothing`, async () => {
      const res = await decodeCall(headers);
      assert.equal(res.status, 401);
      assert.ok(!res.body.includes('payloads'));
      assert.ok(!res.body.includes('pro_monthly'));
    });
  }

  it('refuses /encode without a token too', async () => {
    const res = await request(`${server.url}/encode`, {
      method: 'POST',
      body: encryptedBody,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 401);
  });

  it('encodes with the token, under the active key id, and the result decodes', async () => {
    const plain = JSON.stringify({ payloads: [toJson(defaultPayloadConverter.toPayload('hello'))] });
    const enc = await request(`${server.url}/encode`, {
      method: 'POST',
      body: plain,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(enc.status, 200);
    const [p] = JSON.parse(enc.body).payloads;
    assert.equal(Buffer.from(p.metadata['encryption-key-id'], 'base64').toString(), 'k2');
    const dec = await decodeCall({ authorization: `Bearer ${TOKEN}` }, enc.body);
    assert.equal(Buffer.from(JSON.parse(dec.body).payloads[0].data, 'base64').toString(), '"hello"');
  });

  it('a payload under a key it does not have: 422 naming the key id, nothing decoded', async () => {
    const other = new EncryptionCodec(keyringFromEnv(codecEnv({ k9: newKey() }, 'k9'))!);
    const body = JSON.stringify({
      payloads: (await other.encode([defaultPayloadConverter.toPayload('x')])).map(toJson),
    });
    const res = await decodeCall({ authorization: `Bearer ${TOKEN}` }, body);
    assert.equal(res.status, 422);
    assert.match(JSON.parse(res.body).error, /key "k9"/);
  });

  it('rejects a malformed body with 400', async () => {
    for (const body of ['nope', '{"payloads":"x"}', '{"payloads":[{"data":"***"}]}']) {
      const res = await decodeCall({ authorization: `Bearer ${TOKEN}` }, body);
      assert.equal(res.status, 400, body);
    }
  });
});

describe('codec server: CORS', () => {
  it("answers the UI origin's preflight with exactly that origin, credentials and the headers the UI sends", async () => {
    const res = await request(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace,authorization',
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], UI);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.match(String(res.headers['access-control-allow-headers']), /X-Namespace/);
    assert.match(String(res.headers['access-control-allow-headers']), /Authorization/);
  });

  it("refuses another origin's preflight: 403, no allow headers", async () => {
    const res = await request(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: { origin: EVIL, 'access-control-request-method': 'POST' },
    });
    assert.equal(res.status, 403);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });

  it('refuses a request from another origin even with a valid token', async () => {
    const res = await decodeCall({ origin: EVIL, authorization: `Bearer ${TOKEN}` });
    assert.equal(res.status, 403);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.ok(!res.body.includes('pro_monthly'));
  });

  it('the UI origin with a valid token gets the payloads and the CORS headers to read them', async () => {
    const res = await decodeCall({ origin: UI, authorization: `Bearer ${TOKEN}` });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], UI);
  });

  it('the UI origin without a token: 401 (readable by the UI, so it can say why)', async () => {
    const res = await decodeCall({ origin: UI });
    assert.equal(res.status, 401);
    assert.equal(res.headers['access-control-allow-origin'], UI);
  });
});

describe('codec server: browser sign-in (for the Web UI\'s "include cross-origin credentials")', () => {
  it('a wrong token sets no cookie; the right one sets an HttpOnly SameSite=Strict session that decodes', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const wrong = await request(`${server.url}/login`, { method: 'POST', headers: form, body: `token=${newToken()}` });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers['set-cookie'], undefined);

    const ok = await request(`${server.url}/login`, { method: 'POST', headers: form, body: `token=${TOKEN}` });
    assert.equal(ok.status, 200);
    const cookie = String(ok.headers['set-cookie']);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    assert.ok(!cookie.includes(TOKEN), 'the cookie is derived from the token, not the token itself');
    const session = cookie.split(';')[0]!;

    const res = await decodeCall({ origin: UI, cookie: session });
    assert.equal(res.status, 200);
    assert.match(Buffer.from(JSON.parse(res.body).payloads[0].data, 'base64').toString(), /pro_monthly/);
  });

  it('a login form posted from another site is refused', async () => {
    const res = await request(`${server.url}/login`, {
      method: 'POST',
      headers: { origin: EVIL, 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${TOKEN}`,
    });
    assert.equal(res.status, 403);
    assert.equal(res.headers['set-cookie'], undefined);
  });
});

describe('codec server: secrets and startup', () => {
  it('never logs the token or a key', () => {
    const log = server.output();
    assert.match(log, /-> 401/);
    assert.match(log, /-> 200/);
    for (const secret of [TOKEN, K1, K2]) assert.ok(!log.includes(secret));
  });

  const entry = path.join(DIST, 'codec-server', 'main.js');
  const start = (env: Record<string, string>) =>
    spawnSync(process.execPath, [entry], {
      env: { ...withoutCodec(), AGENT_CODEC_PORT: '0', ...env },
      encoding: 'utf8',
      timeout: 15_000,
    });
  for (const [what, env, message] of [
    ['without keys', { AGENT_CODEC_TOKEN: TOKEN }, /no codec keys/],
    ['without a token', { ...keys }, /AGENT_CODEC_TOKEN/],
    ['with a short token', { ...keys, AGENT_CODEC_TOKEN: 'short' }, /at least 16/],
    ['with a bad key', { AGENT_CODEC_KEYS: 'k1:abc', AGENT_CODEC_TOKEN: TOKEN }, /32 bytes/],
  ] as Array<[string, Record<string, string>, RegExp]>) {
    it(`refuses to start ${what}, in one line`, () => {
      const r = start(env);
      assert.equal(r.status, 1);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n').length, 1);
    });
  }
});
