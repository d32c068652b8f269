// The Dockerfile's build, run outside Docker (there is no Docker engine on this machine): its COPY
// lines, parsed, copy exactly those files into an empty folder; its RUN line's steps run there (the
// install from the lockfile, the `prepare` compile, the prune); the final stage's COPY --from lines
// take what the image keeps into a second folder, and the worker runs from it with the image's ENV:
// it refuses to start with neither OPENAI_API_KEY nor OPENAI_BASE_URL, and with a base URL it polls
// the test server and reports healthy on /healthz.
//
// Where it differs from `docker build`, and why:
// - `npm ci --ignore-scripts --prefer-offline`, then the scripts it would have run, one by one: the
//   lifecycle scripts of the dependencies except better-sqlite3's native compile (minutes on this
//   2-core machine), whose addon is copied from the project's own install instead (built for this
//   machine's Node, as the image builds its own for Node 24), then the package's `prepare` (tsc).
// - Node is this machine's (20 here, 24 in the image), and the image's npm_config_nodedir (the
//   official image's header location) is not applied: .npmrc's applies, as on this machine.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import * as path from 'node:path';
import { MISSING_LLM_MESSAGE } from '../activities/llm-config';
import { eventually, REPO_ROOT, testEnv } from './helpers/harness';

interface Stage {
  name?: string;
  workdir: string;
  env: Record<string, string>;
  copies: Array<{ from?: string; sources: string[]; dest: string }>;
  runs: string[];
  cmd?: string[];
}

/** The instructions this project's Dockerfile uses, per stage; anything else fails the test. */
function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [instruction, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    const stage = stages[stages.length - 1];
    switch (instruction!.toUpperCase()) {
      case 'FROM': {
        const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
        stages.push({ name: m?.[2], workdir: '/', env: {}, copies: [], runs: [] });
        break;
      }
      case 'WORKDIR':
        stage!.workdir = args;
        break;
      case 'ENV':
        for (const m of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(\S+)/g)) stage!.env[m[1]!] = m[2]!;
        break;
      case 'COPY': {
        const words = args.split(/\s+/);
        const from = words[0]!.startsWith('--from=') ? words.shift()!.slice('--from='.length) : undefined;
        const dest = words.pop()!;
        stage!.copies.push({ from, sources: words, dest });
        break;
      }
      case 'RUN':
        stage!.runs.push(args);
        break;
      case 'CMD':
        stage!.cmd = JSON.parse(args) as string[];
        break;
      case 'USER':
      case 'EXPOSE':
      case 'ARG': // a build argument; unset here, as in a plain `docker build`
        break;
      default:
        assert.fail(`Dockerfile: ${instruction} is not understood by this test; teach it`);
    }
  }
  return stages;
}

/** COPY's semantics for what this Dockerfile does: files into a folder (dest ends in /), a folder to a folder. */
function copy(sources: string[], fromDir: string, dest: string, toDir: string): void {
  for (const source of sources) {
    const src = path.join(fromDir, source);
    assert.ok(existsSync(src), `COPY ${source}: no such file`);
    const target = dest.endsWith('/') ? path.join(toDir, dest, path.basename(source)) : path.join(toDir, dest);
    mkdirSync(path.dirname(target), { recursive: true });
    cpSync(src, target, { recursive: statSync(src).isDirectory() });
  }
}

function run(cmd: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 600_000 });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed in ${cwd}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

const dockerfile = parseDockerfile(readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8'));
const build = dockerfile[0]!;
const final = dockerfile[dockerfile.length - 1]!;
let tmp: string;
let buildDir: string;
let imageDir: string;
const timings: string[] = [];

/** `node dist/worker/main.js` (the image's CMD) in the image folder, with the image's ENV plus `env`. */
function startWorker(env: Record<string, string>) {
  assert.deepEqual(final.cmd, ['node', 'dist/worker/main.js']);
  const proc = spawn(process.execPath, final.cmd!.slice(1), {
    cwd: imageDir,
    env: { PATH: process.env.PATH ?? '', HOME: tmp, ...final.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, exited, output: () => output };
}

describe("the Dockerfile's build steps, outside Docker", () => {
  before(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'dockerfile-steps-'));
    buildDir = path.join(tmp, 'build', build.workdir);
    imageDir = path.join(tmp, 'image', final.workdir);
    mkdirSync(buildDir, { recursive: true });
    mkdirSync(imageDir, { recursive: true });
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('builds from exactly what the COPY lines copy, with the sources in place before npm ci', () => {
    assert.equal(dockerfile.length, 2, 'a build stage and a runtime stage');
    assert.deepEqual(build.runs, ['npm ci && npm prune --omit=dev'], 'the steps below are these');
    for (const c of build.copies) {
      assert.equal(c.from, undefined);
      copy(c.sources, REPO_ROOT, c.dest, buildDir);
    }

    let started = Date.now();
    run('npm', ['ci', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], buildDir);
    timings.push(`npm ci --ignore-scripts ${((Date.now() - started) / 1000).toFixed(0)} s`);
    // The dependencies' own install scripts, but better-sqlite3's compile (see the header).
    run('npm', ['rebuild', '--foreground-scripts', 'protobufjs', '@swc/core'], buildDir);
    const addon = path.join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    mkdirSync(path.dirname(path.join(buildDir, addon)), { recursive: true });
    cpSync(path.join(REPO_ROOT, addon), path.join(buildDir, addon));

    started = Date.now();
    run('npm', ['run', 'prepare'], buildDir); // what failed before the sources were copied first: TS5057
    timings.push(`prepare (tsc) ${((Date.now() - started) / 1000).toFixed(0)} s`);
    assert.ok(existsSync(path.join(buildDir, 'dist', 'worker', 'main.js')));
    run('npm', ['prune', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], buildDir);
    assert.ok(!existsSync(path.join(buildDir, 'node_modules', 'typescript')), 'dev dependencies pruned');

    for (const c of final.copies) {
      assert.equal(c.from, build.name, `the runtime stage copies only from the build stage: ${c.sources.join(' ')}`);
      const inBuild = c.sources.map((s) => path.relative(build.workdir, s));
      copy(inBuild, buildDir, c.dest, imageDir);
    }
    console.log(`# dockerfile steps: ${timings.join(', ')}`);
  });

  it('the image refuses to start a worker without OPENAI_API_KEY, in one line', async () => {
    const worker = startWorker({ TEMPORAL_ADDRESS: '127.0.0.1:1', AGENT_METRICS_PORT: 'off' });
    assert.equal(await worker.exited, 1);
    assert.equal(worker.output(), `worker: ${MISSING_LLM_MESSAGE}\n`);
  });

  it('the image runs the worker (for a keyless LLM server): it polls the test server and answers /healthz', async () => {
    const env = testEnv('dockerfile-steps');
    const worker = startWorker({
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
      // A keyless OpenAI-compatible server: the base URL alone lets the worker start.
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      // The image's 9464 may be taken by another worker on this machine: any free port.
      AGENT_METRICS_PORT: '0',
    });
    try {
      const url = await eventually(
        'the worker ready line with its metrics URL',
        () => /worker ready: .* metrics=(http:\/\/\S+)\/metrics/.exec(worker.output())?.[1],
        180_000,
      );
      const health = await eventually(
        'a healthy /healthz',
        async () => {
          const r = await fetch(`${url}/healthz`);
          return r.status === 200 ? r : undefined;
        },
        60_000,
      );
      assert.equal(await health.text(), 'ok\n');
      assert.match(worker.output(), /state: 'RUNNING'/);
    } finally {
      worker.proc.kill('SIGTERM');
      assert.equal(await worker.exited, 0, worker.output());
    }
  });
});
