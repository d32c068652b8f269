// The codec server the Temporal Web UI (and `temporal --codec-endpoint`) calls to show encrypted
// payloads: POST .../encode and .../decode with {"payloads":[{metadata:{k:base64},data:base64}]}.
// It holds the keys, so it is guarded:
//   - CORS: only the configured UI origin(s) get Access-Control-Allow-* headers; any request that
//     carries another Origin is refused with 403 before anything is decoded.
//   - Authorization: a bearer token (AGENT_CODEC_TOKEN) in `Authorization: Bearer …`, or the session
//     cookie set by /login (for the Web UI, whose "include cross-origin credentials" setting sends
//     cookies). Compared in constant time. Without it: 401, nothing decoded.
// Logs one line per request (method, path, status, namespace, payload count), never a body or token.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { processLog } from '../runtime/process-log';

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** The shared secret a caller must present. At least 16 characters. */
  token: string;
  /** Browser origins allowed to call (the Web UI's), e.g. http://localhost:8233. */
  allowedOrigins: readonly string[];
  /** Largest request body accepted, in bytes (default 8 MiB). */
  maxBodyBytes?: number;
  /** Mark the session cookie Secure (serve over HTTPS, or behind a TLS proxy). */
  secureCookie?: boolean;
  log?: (line: string) => void;
}

export interface RunningCodecServer {
  url: string;
  server: http.Server;
  close(): Promise<void>;
}

export const SESSION_COOKIE = 'agent_codec_session';
const SESSION_MAX_AGE_S = 12 * 60 * 60;
const MIN_TOKEN_CHARS = 16;

export function createCodecServer(opts: CodecServerOptions): http.Server {
  if (opts.token.length < MIN_TOKEN_CHARS)
    throw new Error(`the codec token must be at least ${MIN_TOKEN_CHARS} characters`);
  const origins = new Set(opts.allowedOrigins.map(normaliseOrigin));
  const tokenDigest = sha256(opts.token);
  const session = createHmac('sha256', opts.token).update('agent-codec-session-v1').digest('base64url');
  const sessionDigest = sha256(session);
  const maxBody = opts.maxBodyBytes ?? 8 * 1024 * 1024;
  const log = opts.log ?? ((line: string) => processLog('codec-server').info(line));

  const authorized = (req: http.IncomingMessage): boolean => {
    const header = req.headers.authorization;
    const bearer = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
    if (bearer !== undefined && timingSafeEqual(sha256(bearer), tokenDigest)) return true;
    const cookie = readCookie(req.headers.cookie, SESSION_COOKIE);
    return cookie !== undefined && timingSafeEqual(sha256(cookie), sessionDigest);
  };

  return http.createServer((req, res) => {
    const started = Date.now();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
    const namespace = typeof req.headers['x-namespace'] === 'string' ? req.headers['x-namespace'].slice(0, 100) : '-';
    let count = 0;
    const finish = (status: number, body: string | object, headers: Record<string, string> = {}) => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, {
        'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        vary: 'Origin',
        ...(origin !== undefined && origins.has(origin) ? corsHeaders(origin) : {}),
        ...headers,
      });
      res.end(text);
      log(
        `codec-server ${req.method} ${path} -> ${status} ns=${namespace} payloads=${count} ${Date.now() - started}ms${origin ? ` origin=${origin}` : ''}`,
      );
    };

    // Same-origin pages (the /login form posting to itself) send their own origin.
    const own =
      origin !== undefined &&
      (origin === `http://${req.headers.host ?? ''}` || origin === `https://${req.headers.host ?? ''}`);
    const originOk = origin === undefined || origins.has(origin) || ((path === '/login' || path === '/logout') && own);
    if (!originOk) return drain(req, () => finish(403, { error: 'origin not allowed' }));

    if (req.method === 'OPTIONS') {
      // Preflight: the allow headers (from finish) are only sent to an allowed origin.
      return finish(204, '', { 'access-control-max-age': '600' });
    }
    if (req.method === 'GET' && path === '/healthz') return finish(200, 'ok\n');
    if (path === '/login')
      return handleLogin(req, res, {
        authorizedToken: (t) => timingSafeEqual(sha256(t), tokenDigest),
        session,
        secure: opts.secureCookie ?? false,
        finish,
      });
    if (path === '/logout' && req.method === 'POST') {
      return drain(req, () => finish(200, 'logged out\n', { 'set-cookie': cookie('', 0, opts.secureCookie ?? false) }));
    }

    const op = path.endsWith('/encode') ? 'encode' : path.endsWith('/decode') ? 'decode' : undefined;
    if (!op) return drain(req, () => finish(404, { error: 'not found: POST .../encode or .../decode' }));
    if (req.method !== 'POST') return drain(req, () => finish(405, { error: 'use POST' }, { allow: 'POST, OPTIONS' }));
    if (!authorized(req)) {
      return drain(req, () =>
        finish(401, { error: 'a valid codec token is required' }, { 'www-authenticate': 'Bearer realm="agent-codec"' }),
      );
    }

    handleCodec(req, op, { codec: opts.codec, maxBody, finish, counted: (n) => (count = n) });
  });
}

/** POST .../encode or .../decode: the body's payloads through the codec, answered as JSON. */
function handleCodec(
  req: http.IncomingMessage,
  op: 'encode' | 'decode',
  ctx: {
    codec: PayloadCodec;
    maxBody: number;
    finish: LoginContext['finish'];
    /** How many payloads the request carried, for the log line. */
    counted(count: number): void;
  },
): void {
  readBody(req, ctx.maxBody).then(
    async (raw) => {
      let payloads: Payload[];
      try {
        payloads = parsePayloads(raw);
      } catch (err) {
        return ctx.finish(400, { error: (err as Error).message });
      }
      ctx.counted(payloads.length);
      try {
        const out = op === 'encode' ? await ctx.codec.encode(payloads) : await ctx.codec.decode(payloads);
        ctx.finish(200, { payloads: out.map(payloadToJson) });
      } catch (err) {
        // e.g. a payload encrypted with a key this server does not have: say which, decode nothing.
        ctx.finish(422, { error: (err as Error).message });
      }
    },
    (err: Error & { status?: number }) => ctx.finish(err.status ?? 400, { error: err.message }),
  );
}

export async function startCodecServer(
  opts: CodecServerOptions & { port?: number; host?: string },
): Promise<RunningCodecServer> {
  const server = createCodecServer(opts);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function corsHeaders(origin: string): Record<string, string> {
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'POST, OPTIONS',
    'access-control-allow-headers': 'Content-Type, X-Namespace, Authorization, Authorization-Extras',
  };
}

interface LoginContext {
  authorizedToken(token: string): boolean;
  session: string;
  secure: boolean;
  finish(status: number, body: string | object, headers?: Record<string, string>): void;
}

// GET /login: a form for the token. POST /login: checks it and sets an HttpOnly, SameSite=Strict
// session cookie, which the Web UI sends along once "include cross-origin credentials" is on.
function handleLogin(req: http.IncomingMessage, res: http.ServerResponse, ctx: LoginContext): void {
  const page = (message: string) =>
    `<!doctype html><meta charset="utf-8"><title>Agent codec server</title>` +
    `<h1>Agent codec server</h1><p id="message">${message}</p>` +
    `<form method="post" action="/login"><label>Codec token <input type="password" name="token" autocomplete="off" autofocus></label> ` +
    `<button type="submit">Sign in</button></form>`;
  const html = (status: number, message: string, headers: Record<string, string> = {}) => {
    res.setHeader('content-security-policy', "default-src 'none'; form-action 'self'");
    ctx.finish(status, page(message), { 'content-type': 'text/html; charset=utf-8', ...headers });
  };
  if (req.method === 'GET')
    return drain(req, () =>
      html(200, 'Enter the codec token (AGENT_CODEC_TOKEN) to let this browser decode payloads.'),
    );
  if (req.method !== 'POST')
    return drain(req, () => ctx.finish(405, { error: 'use GET or POST' }, { allow: 'GET, POST' }));
  readBody(req, 16 * 1024).then(
    (raw) => {
      const token = new URLSearchParams(raw).get('token') ?? '';
      if (!ctx.authorizedToken(token)) return html(401, 'Wrong token.');
      html(200, 'Signed in: this browser may now decode payloads (until the cookie expires).', {
        'set-cookie': cookie(ctx.session, SESSION_MAX_AGE_S, ctx.secure),
      });
    },
    (err: Error & { status?: number }) => ctx.finish(err.status ?? 400, { error: err.message }),
  );
}

function cookie(value: string, maxAge: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Max-Age=${maxAge}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Decoding {"payloads":[{"metadata":{"k":"<base64>"},"data":"<base64>"}]} (proto3 JSON of Payloads). */
export function parsePayloads(raw: string): Payload[] {
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    throw new Error('body is not JSON');
  }
  const list = (doc as { payloads?: unknown })?.payloads;
  if (typeof doc !== 'object' || doc === null || !Array.isArray(list))
    throw new Error('body must be {"payloads": [...]}');
  return list.map((p, i) => {
    if (typeof p !== 'object' || p === null || Array.isArray(p)) throw new Error(`payloads[${i}] is not an object`);
    const { metadata, data } = p as { metadata?: unknown; data?: unknown };
    const out: Payload = { metadata: {} };
    if (metadata !== undefined && metadata !== null) {
      if (typeof metadata !== 'object' || Array.isArray(metadata))
        throw new Error(`payloads[${i}].metadata is not an object`);
      for (const [k, v] of Object.entries(metadata)) out.metadata![k] = base64(v, `payloads[${i}].metadata.${k}`);
    }
    if (data !== undefined && data !== null) out.data = base64(data, `payloads[${i}].data`);
    return out;
  });
}

function base64(value: unknown, what: string): Uint8Array {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) throw new Error(`${what} is not base64`);
  return Buffer.from(value, value.includes('-') || value.includes('_') ? 'base64url' : 'base64');
}

function payloadToJson(p: Payload): { metadata: Record<string, string>; data: string } {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) if (v) metadata[k] = Buffer.from(v).toString('base64');
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}

function readBody(req: http.IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(Object.assign(new Error(`body larger than ${limit} bytes`), { status: 413 }));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', (err) => {
      if (!failed) reject(err);
    });
  });
}

/** Reply only after the request body was consumed, so the client sees the status, not a reset. */
function drain(req: http.IncomingMessage, then: () => void): void {
  if (req.readableEnded) return then();
  req.resume();
  req.once('end', then);
  req.once('error', then);
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export function normaliseOrigin(origin: string): string {
  const url = new URL(origin.trim());
  return `${url.protocol}//${url.host}`;
}
