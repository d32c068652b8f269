// `npx agent` runs the checkout's CLI from node_modules/.bin (linked by the build's
// scripts/link-cli-bin.ts) without npx installing anything: with a "bin" in package.json, npm installs
// the project into its own cache first (seconds at every call). Each case builds a project folder
// of its own (this package.json, dist/ linked to this build's, its own node_modules) and runs real
// `npx` with an npm cache of its own, offline, so nothing can come from a registry.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../local-servers/repo-root';

const run = promisify(execFile);
const ROOT = repoRoot();
const LINK_SCRIPT = path.join(ROOT, 'dist', 'scripts', 'link-cli-bin.js');
const folders: string[] = [];
after(() => folders.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** A project folder: this package.json, this build's dist/, and node_modules as `modules` says. */
function projectFolder(modules: 'own' | 'symlink'): { dir: string; cache: string } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'npx-agent-'));
  folders.push(base);
  const dir = path.join(base, 'project');
  fs.mkdirSync(dir);
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  fs.symlinkSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'));
  if (modules === 'own') fs.mkdirSync(path.join(dir, 'node_modules'));
  else {
    fs.mkdirSync(path.join(base, 'shared_modules'));
    fs.symlinkSync(path.join(base, 'shared_modules'), path.join(dir, 'node_modules'));
  }
  return { dir, cache: path.join(base, 'npm-cache') };
}

async function linkBin(dir: string): Promise<string> {
  const { stdout } = await run(process.execPath, [LINK_SCRIPT, dir]);
  return stdout;
}

describe('npx agent', () => {
  it('runs the linked CLI at once: nothing installed into the npx cache, nothing fetched', async () => {
    const { dir, cache } = projectFolder('own');
    assert.match(await linkBin(dir), /^linked .*node_modules\/\.bin\/agent -> \.\.\/\.\.\/dist\/cli\/cli\.js/);
    assert.equal(await linkBin(dir), '', 'a second build has nothing to link and says nothing');

    const started = Date.now();
    const npx = await run('npx', ['agent', '--help'], {
      cwd: dir,
      env: { ...process.env, npm_config_cache: cache, npm_config_offline: 'true', npm_config_yes: 'false' },
    }).catch((err: { code?: number; stdout?: string; stderr?: string }) => ({
      stdout: err.stdout ?? '',
      stderr: `exit ${err.code}: ${err.stderr}`,
    }));
    const elapsed = Date.now() - started;
    assert.equal(
      fs.existsSync(path.join(cache, '_npx')),
      false,
      'npx installed into its cache: does package.json declare a "bin" again? npm then installs the project first',
    );
    assert.match(npx.stdout, /usage: agent <command>/, npx.stderr);
    console.log(`npx agent --help: ${elapsed} ms`);
  });

  it('leaves a node_modules that is not its own alone: a symlink to another checkout, or a foreign .bin/agent', async () => {
    const shared = projectFolder('symlink');
    assert.match(await linkBin(shared.dir), /not linked: node_modules is a symlink/);
    assert.ok(!fs.existsSync(path.join(shared.dir, 'node_modules', '.bin')), 'wrote into a shared node_modules');

    const foreign = projectFolder('own');
    const bin = path.join(foreign.dir, 'node_modules', '.bin', 'agent');
    fs.mkdirSync(path.dirname(bin));
    fs.writeFileSync(bin, '#!/bin/sh\necho another package\n');
    assert.match(await linkBin(foreign.dir), /not linked: .* exists and is not this project's link/);
    assert.equal(fs.readFileSync(bin, 'utf8'), '#!/bin/sh\necho another package\n');
  });
});
