// A build step (`npm run build`): records which code this build is, for the worker's build id
// (worker/build-id.ts). The commit comes from git when there is one; a Docker build has no .git in
// its context, so it passes BUILD_COMMIT (a build argument) instead. An unchanged record is not
// written again (a build where nothing changed touches nothing).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { BUILD_INFO_FILE } from '../worker/build-id';
import type { BuildInfo } from '../worker/build-id';
import { repoRoot } from '../local-servers/repo-root';

function commitOfCheckout(): string | undefined {
  const fromEnv = process.env.BUILD_COMMIT?.trim();
  if (fromEnv) return fromEnv;
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: repoRoot(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined; // no git and no BUILD_COMMIT: the build id is the package version alone
  }
}

const pkg = JSON.parse(readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as { version: string };
const commit = commitOfCheckout();
const info: BuildInfo = { version: pkg.version, ...(commit ? { commit } : {}) };
const text = JSON.stringify(info) + '\n';
if (readOrNothing(BUILD_INFO_FILE) !== text) writeFileSync(BUILD_INFO_FILE, text);

function readOrNothing(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
