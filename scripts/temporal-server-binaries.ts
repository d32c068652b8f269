// The multi-service Temporal server and its schema tool, built from Go source at the version the
// compose file runs: docker-compose.yml's `temporalio/server:<version>` image tag is the one place
// to bump it (the test in test/compose.test.ts keeps admin-tools on the same tag).
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

/** The server version of the deployment: the tag of the `temporal` service's image in docker-compose.yml. */
export function composeServerVersion(composeFile = path.join(repoRoot(), 'docker-compose.yml')): string {
  const doc = parse(fs.readFileSync(composeFile, 'utf8')) as { services?: Record<string, { image?: string }> };
  const image = doc.services?.temporal?.image ?? '';
  const m = /^temporalio\/server:(\d+\.\d+\.\d+)$/.exec(image);
  if (!m)
    throw new Error(
      `${composeFile}: services.temporal.image should be temporalio/server:X.Y.Z, is ${JSON.stringify(image)}`,
    );
  return m[1]!;
}

/** Built once per version, kept outside the repository so a fresh clone reuses it. */
function cacheDir(version: string): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'durable-react-agent', `temporal-server-${version}`);
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
export async function findOrBuildTemporalServer(log: Log = console.error): Promise<TemporalServerBinaries> {
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

// `node dist/scripts/temporal-server-binaries.js` builds both (used by .ci/run up front) and prints their paths.
if (require.main === module) {
  findOrBuildTemporalServer().then(
    (b) => console.log(`${b.server}\n${b.sqlTool}`),
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
