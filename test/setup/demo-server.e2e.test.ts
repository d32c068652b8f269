// `npm run demo` prints the run's Web UI link: with --keep-server (or a "y" on a terminal) the dev
// server it started, and so the link, keeps answering until Ctrl-C; without, it says the link stops
// working when the demo ends, and it does. Real demo processes, each starting its own dev server on
// ports and a SQLite file of the test's (TEMPORAL_ADDRESS, TEMPORAL_UI_PORT, TEMPORAL_DEV_DB).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../../local-servers/free-port';
import { eventually, REPO_ROOT } from '../helpers/harness';
import { spawnOnTerminal } from '../helpers/pseudo-terminal';

const DEMO_TIMEOUT_MS = 180_000;
const LINK = /Open the run in the Temporal Web UI: (http:\/\/\S+)/;

interface Demo {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  exit: Promise<number | null>;
}

/** The demo on a dev server of its own; `terminal`: on a pseudo-terminal (util-linux `script`). */
async function startDemo(args: string[], terminal = false): Promise<Demo> {
  const grpc = await freePort();
  const ui = await freePort([grpc]);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: `127.0.0.1:${grpc}`,
    TEMPORAL_UI_PORT: String(ui),
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_DEV_DB: path.join(mkdtempSync(path.join(os.tmpdir(), 'demo-server-')), 'dev.sqlite'),
  };
  for (const name of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'TEMPORAL_UI_URL', 'AGENT_CODEC_KEYS']) delete env[name];
  const command = [process.execPath, path.join(REPO_ROOT, 'dist', 'scripts', 'demo.js'), ...args];
  const child = terminal ? spawnOnTerminal(command, env) : spawn(command[0]!, command.slice(1), { env });
  let log = '';
  child.stdout.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr.on('data', (c: Buffer) => (log += c.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => log, exit };
}

const shows = (demo: Demo, text: string) =>
  eventually(`"${text}" from the demo`, () => (demo.output().includes(text) ? true : undefined), DEMO_TIMEOUT_MS);

async function uiAnswers(url: string): Promise<boolean> {
  return fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
    (r) => r.ok,
    () => false,
  );
}

/** The link answers while the demo waits; Ctrl-C stops the server, and the link with it. */
async function keptUntilInterrupt(demo: Demo, interrupt: () => void): Promise<void> {
  await shows(demo, 'Press Ctrl-C to stop it.');
  const link = LINK.exec(demo.output())?.[1];
  assert.ok(link, demo.output());
  assert.equal(await uiAnswers(link), true, 'the link answers after the demo is done');
  assert.ok(demo.output().includes('The dev server keeps running, and the link with it'), demo.output());
  assert.equal(demo.child.exitCode, null, 'the demo waits for Ctrl-C');
  interrupt();
  assert.equal(await demo.exit, 0, demo.output());
  await eventually('the Web UI stopped with the demo', async () => ((await uiAnswers(link)) ? undefined : true));
}

describe('npm run demo and its Web UI link', { timeout: 3 * DEMO_TIMEOUT_MS }, () => {
  it('--keep-server keeps the Web UI answering until SIGINT', async () => {
    const demo = await startDemo(['--keep-server']);
    try {
      await keptUntilInterrupt(demo, () => demo.child.kill('SIGINT'));
    } finally {
      demo.child.kill('SIGKILL');
    }
  });

  it('without it, says the link stops working when the demo ends, and stops the server', async () => {
    const demo = await startDemo([]);
    try {
      assert.equal(await demo.exit, 0, demo.output());
      const out = demo.output();
      assert.ok(out.includes('The link stops working when the demo ends'), out);
      assert.ok(!out.includes('[y/N]'), 'no question without a terminal');
      const link = LINK.exec(out)?.[1];
      assert.ok(link, out);
      assert.equal(await uiAnswers(link), false, 'the server stopped with the demo');
    } finally {
      demo.child.kill('SIGKILL');
    }
  });

  it('on a terminal it offers to keep the server; "y" keeps it until Ctrl-C', async () => {
    const demo = await startDemo([], true);
    try {
      await shows(demo, '[y/N]');
      demo.child.stdin.write('y\r');
      // Ctrl-C typed on the terminal: the line discipline signals the demo.
      await keptUntilInterrupt(demo, () => demo.child.stdin.write('\x03'));
    } finally {
      demo.child.kill('SIGKILL');
    }
  });
});
