// Test plumbing for encryption: fresh keys, codec environments, and the codec server as a process.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import * as path from 'node:path';
import { DIST } from './harness';

export const newKey = (): string => randomBytes(32).toString('base64');
export const newToken = (): string => randomBytes(24).toString('hex');

/** Env for a worker, client or codec server: these keys, this active one. */
export function codecEnv(keys: Record<string, string>, active: string): Record<string, string> {
  return {
    AGENT_CODEC_KEYS: Object.entries(keys)
      .map(([id, k]) => `${id}:${k}`)
      .join(','),
    AGENT_CODEC_ACTIVE_KEY_ID: active,
  };
}

/** The same env without any codec setting, for a client that must see raw payloads. */
export function withoutCodec(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('AGENT_CODEC_')));
}

export interface CodecServerProcess {
  proc: ChildProcess;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** `node dist/codec-server/main.js`, the entry `npm run codec-server` runs, on a free port. */
export async function startCodecServerProcess(env: Record<string, string>): Promise<CodecServerProcess> {
  const proc = spawn(process.execPath, [path.join(DIST, 'codec-server', 'main.js')], {
    env: { ...withoutCodec(), AGENT_CODEC_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(log);
      if (m) resolve(m[1]!);
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`codec server exited with ${code}:\n${log}`)));
  });
  return {
    proc,
    url,
    output: () => log,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

export interface HttpReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A raw HTTP request (fetch would not let a test set Origin freely). */
export function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}
