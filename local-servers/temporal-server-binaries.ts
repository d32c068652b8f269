// The multi-service Temporal server and its schema tool, built from Go source at the version the
// compose file runs: docker-compose.yml's `temporalio/server:<version>` image tag is the one place
// to bump it (the test in test/setup/compose.test.ts keeps admin-tools on a tag of the same server version).
import { processLog } from '../runtime/process-log';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { findGo, goInstall, isExecutableFile } from './go-install';
import type { Log } from './go-install';
import { repoRoot } from './repo-root';

export interface TemporalServerBinaries {
  version: string;
  /** `go.temporal.io/server/cmd/server` (named temporal-server in the images). */
  server: string;
  /** `go.temporal.io/server/cmd/tools/sql` (temporal-sql-tool in the admin-tools image). */
  sqlTool: string;
}

/** The X.Y.Z of `<repository>:X.Y.Z`, the image of a service in docker-compose.yml. */
function composeImageVersion(service: string, repository: string, composeFile: string): string {
  const doc = parse(fs.readFileSync(composeFile, 'utf8')) as { services?: Record<string, { image?: string }> };
  const image = doc.services?.[service]?.image ?? '';
  const [repo, tag = ''] = image.split(':');
  if (repo !== repository || !/^\d+\.\d+\.\d+$/.test(tag)) {
    throw new Error(
      `${composeFile}: services.${service}.image should be ${repository}:X.Y.Z, is ${JSON.stringify(image)}`,
    );
  }
  return tag;
}

const composeFile = (): string => path.join(repoRoot(), 'docker-compose.yml');

/** The server version of the deployment: the tag of the `temporal` service's image in docker-compose.yml. */
export function composeServerVersion(file = composeFile()): string {
  return composeImageVersion('temporal', 'temporalio/server', file);
}

/** The Web UI version of the deployment: the tag of the `temporal-ui` service's image. */
export function composeUiVersion(file = composeFile()): string {
  return composeImageVersion('temporal-ui', 'temporalio/ui', file);
}

/** Built once per version, kept outside the repository so a fresh clone reuses it. */
function cacheDir(what: string): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'durable-react-agent', `temporal-server-${what}`);
}

function fromEnv(name: string): string | undefined {
  const value = process.env[name];
  if (!value) return undefined;
  const abs = path.resolve(value);
  if (!isExecutableFile(abs)) throw new Error(`${name}=${value} is not an executable file`);
  return abs;
}

/**
 * Paths of the server and the schema tool: TEMPORAL_SERVER_PATH / TEMPORAL_SQL_TOOL_PATH, else the
 * cache, else `go install` at the compose file's version (several minutes the first time).
 */
export async function findOrBuildTemporalServer(
  log: Log = processLog('temporal-server-binaries').info,
): Promise<TemporalServerBinaries> {
  const version = composeServerVersion();
  const dir = cacheDir(version);
  const wanted = { server: 'server', sqlTool: 'sql' } as const;
  const found: Partial<TemporalServerBinaries> = {
    version,
    server: fromEnv('TEMPORAL_SERVER_PATH'),
    sqlTool: fromEnv('TEMPORAL_SQL_TOOL_PATH'),
  };
  for (const key of ['server', 'sqlTool'] as const) {
    if (found[key]) continue;
    const bin = path.join(dir, wanted[key]);
    if (isExecutableFile(bin)) {
      found[key] = bin;
      continue;
    }
    const goExe = findGo();
    if (!goExe) {
      throw new Error(
        `the Temporal server ${version} is built from source with Go, and no \`go\` was found on PATH or in /usr/local/go/bin: install Go (https://go.dev/dl), or set TEMPORAL_SERVER_PATH and TEMPORAL_SQL_TOOL_PATH`,
      );
    }
    fs.mkdirSync(dir, { recursive: true });
    const goPackage = key === 'server' ? 'cmd/server' : 'cmd/tools/sql';
    found[key] = await goInstall(
      goExe,
      `go.temporal.io/server/${goPackage}@v${version}`,
      dir,
      wanted[key],
      log,
      'temporal-server',
    );
  }
  return found as TemporalServerBinaries;
}

export interface UiServerBinary {
  version: string;
  /** `github.com/temporalio/ui-server/v2/cmd/server`: the program in the temporalio/ui image. */
  server: string;
  /** The module's own folder: its config/docker.yaml is the template the image renders from env vars. */
  moduleDir: string;
}

/** The Web UI server at the compose file's `temporalio/ui` version, built once with `go install`. */
export async function findOrBuildUiServer(
  log: Log = processLog('temporal-server-binaries').info,
): Promise<UiServerBinary> {
  const version = composeUiVersion();
  const goExe = findGo();
  if (!goExe) throw new Error('the Web UI server is built from source with Go, and no `go` was found');
  const goModule = `github.com/temporalio/ui-server/v2@v${version}`;
  const dir = cacheDir(`ui-${version}`);
  let server = path.join(dir, 'server');
  if (!isExecutableFile(server)) {
    fs.mkdirSync(dir, { recursive: true });
    server = await goInstall(
      goExe,
      `github.com/temporalio/ui-server/v2/cmd/server@v${version}`,
      dir,
      'server',
      log,
      'temporal-ui',
    );
  }
  const r = spawnSync(goExe, ['mod', 'download', '-json', goModule], { encoding: 'utf8', timeout: 300_000 });
  const moduleDir = r.status === 0 ? (JSON.parse(r.stdout) as { Dir?: string }).Dir : undefined;
  if (!moduleDir) throw new Error(`go mod download ${goModule} failed: ${(r.stderr || r.stdout).trim()}`);
  return { version, server, moduleDir };
}

// `node dist/local-servers/temporal-server-binaries.js` builds the server, the schema tool and the Web UI
// server (used by .ci/run up front) and prints their paths.
if (require.main === module) {
  (async () => {
    const b = await findOrBuildTemporalServer();
    const ui = await findOrBuildUiServer();
    console.log(`${b.server}\n${b.sqlTool}\n${ui.server}`);
  })().catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
}
