import fs from 'node:fs';
import path from 'node:path';

/** Folder holding package.json: works from local-servers/ (ts) and dist/local-servers/ (compiled). */
export function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${__dirname}`);
    dir = up;
  }
  return dir;
}
