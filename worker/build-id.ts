// Which code this worker runs, as Temporal's Worker Deployment Versions name it: a build id within a
// deployment. It is read outside the workflow (the worker process) and never changes while it runs.
// `npm run build` records the package version and the commit (scripts/write-build-info.ts), so a
// worker started where there is no git (a container image) still knows its build.
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { readEnv } from '../runtime/env-vars';

/** What the build recorded: dist/build-info.json. */
export interface BuildInfo {
  version: string;
  /** Absent when the build had neither git nor BUILD_COMMIT. */
  commit?: string;
}

export const BUILD_INFO_FILE = path.resolve(__dirname, '..', 'build-info.json');

/** `<version>+<commit>` from the build's record; AGENT_BUILD_ID overrides it. */
export function buildIdFromEnv(env: NodeJS.ProcessEnv = process.env, infoFile = BUILD_INFO_FILE): string {
  const explicit = readEnv('AGENT_BUILD_ID', env);
  if (explicit) return explicit;
  if (!existsSync(infoFile)) {
    throw new Error(`no build id: ${infoFile} is missing (run \`npm run build\`) and AGENT_BUILD_ID is unset`);
  }
  const info = JSON.parse(readFileSync(infoFile, 'utf8')) as BuildInfo;
  return info.commit ? `${info.version}+${info.commit}` : info.version;
}
