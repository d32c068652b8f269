// `npm run lint` part two: ESLint's import-x/no-cycle skips type-only imports, so this walks every
// relative import (type-only too) and fails on any cycle. Run from the repository root.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const files = execFileSync('git', ['ls-files', '*.ts'], { encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.startsWith('test/fixtures/'));
const edges = new Map<string, string[]>();
for (const file of files) {
  const targets: string[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\()['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const base = path.normalize(path.join(path.dirname(file), m[1]!));
    const hit = [`${base}.ts`, `${base}/index.ts`].find((candidate) => existsSync(candidate));
    if (hit) targets.push(hit);
  }
  edges.set(file, targets);
}

const cycles: string[] = [];
const done = new Set<string>();
const onPath: string[] = [];
function visit(file: string): void {
  onPath.push(file);
  for (const next of edges.get(file) ?? []) {
    const at = onPath.indexOf(next);
    if (at >= 0) cycles.push([...onPath.slice(at), next].join(' -> '));
    else if (!done.has(next)) visit(next);
  }
  onPath.pop();
  done.add(file);
}
for (const file of files) if (!done.has(file)) visit(file);

if (cycles.length > 0) {
  console.error(`import cycles (type-only imports included):\n${cycles.join('\n')}`);
  process.exit(1);
}
console.log(`no import cycles in ${files.length} files`);
