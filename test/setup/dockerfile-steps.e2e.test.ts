// The Dockerfile's build, run outside Docker (there is no Docker engine on this machine): its COPY
// lines, parsed, copy exactly those files into an empty folder; its RUN line's steps run there (the
// install from the lockfile, the `prepare` compile, the prune); the final stage's COPY --from lines
// take what the image keeps into a second folder, its RUN line makes the refunds ledger's folder
// the image's user's, and the worker runs from it with the image's ENV, as an unprivileged user (the
// image's USER): it refuses to start with neither OPENAI_API_KEY nor OPENAI_BASE_URL, with a base URL
// it polls the test server and reports healthy on /healthz, and it makes an approved refund into its
// default ledger.
//
// Where it differs from `docker build`, and why:
// - `npm ci --ignore-scripts --prefer-offline`, then the scripts it would have run, one by one: the
//   lifecycle scripts of the dependencies except better-sqlite3's native compile (minutes on this
//   2-core machine), whose addon is copied from the project's own install instead (built for this
//   machine's Node, as the image builds its own for Node 24), then the package's `prepare` (tsc).
// - The image's user (`node`, uid 1000) is this machine's nobody (65534) when the test runs as root
//   (setpriv drops to it), else the test's own user; the image's root-owned files stay root's.
// - Node is this machine's (20 here, 24 in the image), and the image's npm_config_nodedir (the
//   official image's header location) is not applied: .npmrc's applies, as on this machine.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { SpawnSyncReturns } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import os from 'node:os';
import * as path from 'node:path';
import { MISSING_LLM_MESSAGE } from '../../activities/decide/llm-config';
import { DEFAULT_REFUNDS_DB } from '../../runtime/env-vars';
import { refundDemoStore, runRefundDemo } from '../../scripts/demo-refund';
import { refundApprovalDemoModel } from '../../offline-model/offline-model';
import { ScriptedLlmServer } from '../../offline-model/scripted-llm-server';
import { connectClient, eventually, REPO_ROOT, testEnv } from '../helpers/harness';

interface Stage {
  name?: string;
  workdir: string;
  env: Record<string, string>;
  copies: Array<{ from?: string; sources: string[]; dest: string }>;
  runs: string[];
  user?: string;
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
        stage!.user = args;
        break;
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

/** Who plays the image's USER here: never root (see the header). */
const imageUser =
  process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : { uid: process.getuid!(), gid: process.getgid!() };
/** The image's final-stage RUN line, which this test performs with imageUser as the owner. */
const LEDGER_DIR = path.posix.dirname(path.posix.join(final.workdir, DEFAULT_REFUNDS_DB));
const CHOWN_LEDGER_DIR = `mkdir -p ${LEDGER_DIR} && chown ${final.user}:${final.user} ${LEDGER_DIR}`;

/** `node dist/worker/main.js` (the image's CMD) in the image folder, with the image's ENV plus `env`. */
function startWorker(env: Record<string, string>) {
  assert.deepEqual(final.cmd, ['node', 'dist/worker/main.js']);
  assert.ok(final.user && final.user !== 'root', 'the image runs as an unprivileged user');
  const asImageUser =
    process.getuid?.() === 0
      ? ['setpriv', [`--reuid=${imageUser.uid}`, `--regid=${imageUser.gid}`, '--clear-groups', process.execPath]]
      : [process.execPath, []];
  const [command, prefix] = asImageUser as [string, string[]];
  const proc = spawn(command, [...prefix, ...final.cmd!.slice(1)], {
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
    chmodSync(tmp, 0o755); // mkdtemp's 0700 would keep the image's user out of the image
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
    assert.deepEqual(final.runs, [CHOWN_LEDGER_DIR], "the runtime stage's one RUN: the ledger's folder, the user's");
    const ledgerDir = path.join(imageDir, path.posix.relative(final.workdir, LEDGER_DIR));
    mkdirSync(ledgerDir, { recursive: true });
    chownSync(ledgerDir, imageUser.uid, imageUser.gid);
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
      // The SDK logs the state change on its own schedule: it may follow the ready line and /healthz.
      await eventually('the SDK logging the worker RUNNING', () =>
        /Worker state changed .*state=RUNNING/.test(worker.output()) ? true : undefined,
      );
    } finally {
      worker.proc.kill('SIGTERM');
      assert.equal(await worker.exited, 0, worker.output());
    }
  });

  // Without a folder of its own the refund fails with EACCES and is retried: the timeout ends the wait.
  it(
    "as the image's user, the worker makes an approved refund into its default ledger",
    { timeout: 240_000 },
    async () => {
      const env = testEnv('dockerfile-steps-refund');
      const llm = await ScriptedLlmServer.start({ defaultScript: refundApprovalDemoModel });
      const worker = startWorker({
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_NAMESPACE: env.namespace,
        TEMPORAL_TASK_QUEUE: env.taskQueue,
        OPENAI_BASE_URL: llm.baseUrl,
        AGENT_METRICS_PORT: 'off',
      });
      const client = await connectClient(env);
      // Read by the test (root or not) once the worker wrote it: AGENT_REFUNDS_DB's default in the image.
      const store = refundDemoStore({ AGENT_REFUNDS_DB: path.join(imageDir, DEFAULT_REFUNDS_DB) });
      try {
        await eventually(
          'the worker ready line',
          () => (/worker ready: /.test(worker.output()) ? true : undefined),
          180_000,
        );
        const workflowId = await runRefundDemo(client, env, {
          say: () => undefined,
          interrupted: new Promise<never>(() => undefined),
          autoApprove: true,
          store,
        });
        const rows = store.refunds().listSync({ workflow_id: workflowId });
        assert.deepEqual(
          rows.map((r) => [r.state, r.amount_usd]),
          [['confirmed', 49]],
          worker.output(),
        );
        assert.equal(statSync(store.file).uid, imageUser.uid, "the ledger is the image's user's file");
      } finally {
        await store.close();
        await client.connection.close();
        worker.proc.kill('SIGTERM');
        assert.equal(await worker.exited, 0, worker.output());
        await llm.close();
      }
    },
  );
});
