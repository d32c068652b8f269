// A build step (`npm run build`): links node_modules/.bin/agent to dist/cli/cli.js, so that `npx agent`
// finds the CLI on its path and runs it at once. package.json declares no "bin" on purpose: npm 7+
// answers `npx <bin of the package itself>` by installing the whole project into its own cache first
// (the "npx detour": seconds at every call, 26 s the first time). Skipped where node_modules is not
// this checkout's own (a symlink to another checkout's, as in a git worktree) or where .bin/agent is
// someone else's. Usage: node dist/scripts/link-cli-bin.js [PROJECT_ROOT] (default: this checkout).
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../local-servers/repo-root';

/** The link's text: relative, so the checkout can move. */
const TARGET = path.join('..', '..', 'dist', 'cli', 'cli.js');

type Outcome = 'linked' | 'up to date' | 'skipped';

function linkCliBin(root: string): { outcome: Outcome; why?: string } {
  const modules = path.join(root, 'node_modules');
  const modulesStat = lstatOrNothing(modules);
  if (!modulesStat) return { outcome: 'skipped', why: 'no node_modules (run npm install)' };
  if (modulesStat.isSymbolicLink()) return { outcome: 'skipped', why: 'node_modules is a symlink (not ours)' };
  const cli = path.join(root, 'dist', 'cli', 'cli.js');
  // tsc writes files without the execute bit; npm would set it on a declared bin.
  fs.chmodSync(cli, 0o755);
  const bin = path.join(modules, '.bin', 'agent');
  const existing = lstatOrNothing(bin);
  if (existing) {
    if (existing.isSymbolicLink() && fs.readlinkSync(bin) === TARGET) return { outcome: 'up to date' };
    return { outcome: 'skipped', why: `${bin} exists and is not this project's link` };
  }
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  fs.symlinkSync(TARGET, bin);
  return { outcome: 'linked' };
}

function lstatOrNothing(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
  }
}

const root = path.resolve(process.argv[2] ?? repoRoot());
const { outcome, why } = linkCliBin(root);
// Quiet when nothing changed, so that a no-change build prints nothing.
if (outcome === 'linked') console.log(`linked ${path.join(root, 'node_modules', '.bin', 'agent')} -> ${TARGET}`);
if (outcome === 'skipped') console.log(`npx agent: node_modules/.bin/agent not linked: ${why}`);
