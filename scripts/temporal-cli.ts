import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Last CLI tag that `go install` can build (later tags carry replace directives that go install rejects). */
export const TEMPORAL_CLI_GO_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

/** Where the @temporalio/testing fallback download is cached. */
const SDK_DOWNLOAD_DIR = path.join(os.homedir(), '.cache', 'temporal-sdk-cli');

type Log = (msg: string) => void;

function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A `temporal` found somewhere could be an unrelated program: make sure it answers like the Temporal CLI. */
function looksLikeTemporalCli(p: string): boolean {
  const r = spawnSync(p, ['--version'], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] });
  return r.status === 0 && /temporal version/i.test(`${r.stdout}${r.stderr}`);
}

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** `go` on PATH, else the official tarball location (PATH is often not set up in non-login shells). */
function findGo(): string | undefined {
  return findOnPath('go') ?? ['/usr/local/go/bin/go', '/usr/lib/go/bin/go'].find(isExecutableFile);
}

/** Folder `go install` writes to: GOBIN, else the first GOPATH entry + /bin, else ~/go/bin. */
function goBinDir(goExe: string | undefined): string {
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

async function goInstall(goExe: string, binDir: string, log: Log): Promise<string> {
  log(`temporal-cli: building ${TEMPORAL_CLI_GO_MODULE} with ${goExe} into ${binDir}`);
  log(
    'temporal-cli: this takes several minutes on a 2-core machine (download + compile of the Temporal server); progress follows',
  );
  const started = Date.now();
  const child = spawn(goExe, ['install', '-v', TEMPORAL_CLI_GO_MODULE], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CGO_ENABLED: process.env.CGO_ENABLED ?? '0' },
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
      `temporal-cli: go install still running (${Math.round((Date.now() - started) / 1000)} s, ${packages} packages so far)`,
    );
  }, 30_000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c) => resolve(c));
  }).finally(() => clearInterval(heartbeat));
  const secs = Math.round((Date.now() - started) / 1000);
  if (code !== 0) {
    throw new Error(
      `go install ${TEMPORAL_CLI_GO_MODULE} failed (exit ${code}) after ${secs} s:\n${lastLines.join('\n')}`,
    );
  }
  const bin = path.join(binDir, 'temporal');
  if (!isExecutableFile(bin)) throw new Error(`go install succeeded but ${bin} is missing`);
  log(`temporal-cli: built ${bin} in ${secs} s (${packages} packages)`);
  return bin;
}

function findInSdkCache(): string | undefined {
  if (!fs.existsSync(SDK_DOWNLOAD_DIR)) return undefined;
  return (
    fs
      .readdirSync(SDK_DOWNLOAD_DIR)
      // The folder is ours alone and the SDK's file naming is not documented: try every executable in it.
      .filter((f) => !/\.(zip|tar|gz|tgz)$/.test(f))
      .map((f) => path.join(SDK_DOWNLOAD_DIR, f))
      .find((p) => isExecutableFile(p) && looksLikeTemporalCli(p))
  );
}

/** Lets the SDK's Rust core download its pinned CLI (needs internet), then picks the binary out of its cache folder. */
async function downloadViaSdk(log: Log): Promise<string> {
  log(`temporal-cli: trying the @temporalio/testing download into ${SDK_DOWNLOAD_DIR} (needs internet access)`);
  fs.mkdirSync(SDK_DOWNLOAD_DIR, { recursive: true });
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'cached-download', downloadDir: SDK_DOWNLOAD_DIR } },
  });
  await env.teardown();
  const found = findInSdkCache();
  if (!found) throw new Error(`the SDK download finished but no temporal binary was found in ${SDK_DOWNLOAD_DIR}`);
  return found;
}

/**
 * Absolute path of a working `temporal` CLI. Order: $TEMPORAL_CLI_PATH, PATH, Go's bin folder,
 * SDK download cache, `go install` (minutes), SDK download (internet only).
 */
export async function findOrBuildTemporalCli(log: Log = console.error): Promise<string> {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    const abs = path.resolve(fromEnv);
    if (!isExecutableFile(abs)) throw new Error(`TEMPORAL_CLI_PATH=${fromEnv} is not an executable file`);
    return abs;
  }

  const onPath = findOnPath('temporal');
  if (onPath && looksLikeTemporalCli(onPath)) return onPath;

  const goExe = findGo();
  const binDir = goBinDir(goExe);
  const inGoBin = path.join(binDir, 'temporal');
  if (isExecutableFile(inGoBin) && looksLikeTemporalCli(inGoBin)) return inGoBin;

  const cached = findInSdkCache();
  if (cached) return cached;

  const failures: string[] = [];
  if (goExe) {
    try {
      return await goInstall(goExe, binDir, log);
    } catch (err) {
      failures.push(`go install: ${(err as Error).message}`);
      log(`temporal-cli: ${failures[failures.length - 1]}`);
    }
  } else {
    failures.push('go install: no `go` found on PATH or in /usr/local/go/bin');
  }

  try {
    return await downloadViaSdk(log);
  } catch (err) {
    failures.push(`SDK download: ${(err as Error).message.split('\n')[0]}`);
  }

  throw new Error(
    [
      'Temporal CLI not found and could not be built or downloaded.',
      ...failures.map((f) => `  - ${f}`),
      'Fix one of:',
      `  * install Go >= 1.21 (https://go.dev/dl; it fetches the 1.25 toolchain itself) and run: go install ${TEMPORAL_CLI_GO_MODULE}`,
      '  * download a release from https://github.com/temporalio/cli/releases and put `temporal` on PATH',
      '  * set TEMPORAL_CLI_PATH=/absolute/path/to/temporal',
    ].join('\n'),
  );
}

// `node dist/scripts/temporal-cli.js` prints the path (used by .ci/run to build the CLI up front).
if (require.main === module) {
  findOrBuildTemporalCli().then(
    (p) => console.log(p),
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
