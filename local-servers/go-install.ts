import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';

// Finding Go and building a Go program with `go install`: shared by the Temporal CLI (dev server)
// and the multi-service Temporal server with its schema tool (local-servers/temporal-server-binaries.ts).

export type Log = (msg: string) => void;

export function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** `go` on PATH, else the official tarball location (PATH is often not set up in non-login shells). */
export function findGo(): string | undefined {
  return findOnPath('go') ?? ['/usr/local/go/bin/go', '/usr/lib/go/bin/go'].find(isExecutableFile);
}

/** Folder `go install` writes to: GOBIN, else the first GOPATH entry + /bin, else ~/go/bin. */
export function goBinDir(goExe: string | undefined): string {
  if (goExe) {
    const r = spawnSync(goExe, ['env', 'GOBIN', 'GOPATH'], { encoding: 'utf8', timeout: 30_000 });
    if (r.status === 0) {
      const [gobin = '', gopath = ''] = r.stdout.split('\n').map((s) => s.trim());
      if (gobin) return gobin;
      const first = gopath.split(path.delimiter).find(Boolean);
      if (first) return path.join(first, 'bin');
    }
  }
  if (process.env.GOBIN) return process.env.GOBIN;
  const gopath = process.env.GOPATH?.split(path.delimiter).find(Boolean);
  return path.join(gopath ?? path.join(os.homedir(), 'go'), 'bin');
}

/**
 * `go install -v module@version` into binDir, with progress on the log (a cold build takes minutes
 * on 2 cores). Resolves with the path of the binary, named `binName`.
 */
export async function goInstall(
  goExe: string,
  goModule: string,
  binDir: string,
  binName: string,
  log: Log,
  label: string,
): Promise<string> {
  log(`${label}: building ${goModule} with ${goExe} into ${binDir}`);
  log(`${label}: this takes several minutes on a 2-core machine the first time (download + compile); progress follows`);
  const started = Date.now();
  const child = spawn(goExe, ['install', '-v', goModule], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GOBIN: binDir, CGO_ENABLED: process.env.CGO_ENABLED ?? '0' },
  });
  let lastLines: string[] = [];
  let packages = 0;
  let downloads = 0;
  const onData = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split('\n')) {
      const l = line.trim();
      if (!l) continue;
      lastLines = [...lastLines.slice(-19), l];
      // `-v` prints one bare package path per line: log every 50th so CI shows movement without
      // flooding; anything with a space is a message (download notice, compile error) and is logged as is.
      const dl = /^go: downloading (.*)$/.exec(l);
      if (dl) {
        if (++downloads % 25 === 1) log(`[go] downloading modules: ${downloads} so far (${dl[1]})`);
      } else if (/\s/.test(l)) log(`[go] ${l}`);
      else if (++packages % 50 === 0) log(`[go] ${packages} packages compiled (latest: ${l})`);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const heartbeat = setInterval(() => {
    log(
      `${label}: go install still running (${Math.round((Date.now() - started) / 1000)} s, ${packages} packages so far)`,
    );
  }, 30_000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c) => resolve(c));
  }).finally(() => clearInterval(heartbeat));
  const secs = Math.round((Date.now() - started) / 1000);
  if (code !== 0)
    throw new Error(`go install ${goModule} failed (exit ${code}) after ${secs} s:\n${lastLines.join('\n')}`);
  const bin = path.join(binDir, binName);
  if (!isExecutableFile(bin)) throw new Error(`go install succeeded but ${bin} is missing`);
  log(`${label}: built ${bin} in ${secs} s (${packages} packages)`);
  return bin;
}
