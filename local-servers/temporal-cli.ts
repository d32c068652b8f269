import { spawnSync } from 'node:child_process';
import { processLog } from '../runtime/process-log';
import { findGo, findOnPath, goBinDir, goInstall, isExecutableFile } from './go-install';
import type { Log } from './go-install';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Last CLI tag that `go install` can build (later tags carry replace directives that go install rejects). */
export const TEMPORAL_CLI_GO_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

/** Where the @temporalio/testing fallback download is cached. */
const SDK_DOWNLOAD_DIR = path.join(os.homedir(), '.cache', 'temporal-sdk-cli');

/** A `temporal` found somewhere could be an unrelated program: make sure it answers like the Temporal CLI. */
function looksLikeTemporalCli(p: string): boolean {
  const r = spawnSync(p, ['--version'], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] });
  return r.status === 0 && /temporal version/i.test(`${r.stdout}${r.stderr}`);
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
export async function findOrBuildTemporalCli(log: Log = processLog('temporal-cli').info): Promise<string> {
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
      return await goInstall(goExe, TEMPORAL_CLI_GO_MODULE, binDir, 'temporal', log, 'temporal-cli');
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

// `node dist/local-servers/temporal-cli.js` prints the path (used by .ci/run to build the CLI up front).
if (require.main === module) {
  findOrBuildTemporalCli().then(
    (p) => console.log(p),
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
