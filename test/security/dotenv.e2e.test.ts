// `.env` in the current directory, read by the worker and the CLI with Node's own loader: a worker
// and an `agent run --wait` started in a folder whose .env says where Temporal is, which task queue
// and which model (the offline one), complete a run with none of that in their environment; a
// variable the environment does set (the namespace) wins over the file's.
import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DIST, eventually, testEnv, uniqueId } from '../helpers/harness';

const env = testEnv(uniqueId('dotenv'));
let dir: string;
/** Only what a shell has, plus the one variable that must win over the file. */
const processEnv = () => ({ PATH: process.env.PATH ?? '', HOME: dir, TEMPORAL_NAMESPACE: env.namespace });

describe('.env in the current directory', () => {
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'dotenv-'));
    writeFileSync(
      path.join(dir, '.env'),
      [
        '# as an operator writes it',
        `TEMPORAL_ADDRESS=${env.address}`,
        `TEMPORAL_TASK_QUEUE=${env.taskQueue}`,
        'TEMPORAL_NAMESPACE=not-this-one',
        'OPENAI_BASE_URL=offline',
        'AGENT_METRICS_PORT="off"',
        '',
      ].join('\n'),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('configures the worker and the CLI; the environment wins over the file', async () => {
    const worker = spawn(process.execPath, [path.join(DIST, 'worker', 'main.js')], {
      cwd: dir,
      env: processEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    worker.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    worker.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
    try {
      const ready = await eventually('the worker ready line', () => /^worker ready: .*$/m.exec(output)?.[0], 60_000);
      assert.match(ready, new RegExp(`namespace=${env.namespace}\\b.* task queue=${env.taskQueue} model=scripted-llm`));

      const cli = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [
            path.join(DIST, 'cli', 'cli.js'),
            'run',
            'User 42 asked: Can I get a refund now?',
            '--user-id',
            '42',
            '--wait',
            '-o',
            'json',
          ],
          { cwd: dir, env: processEnv(), timeout: 90_000 },
          (err, stdout, stderr) =>
            resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
        );
      });
      assert.equal(cli.code, 0, cli.stderr);
      const result = JSON.parse(cli.stdout) as { result?: { stop_reason?: string }; stop_reason?: string };
      assert.equal(result.result?.stop_reason ?? result.stop_reason, 'success', cli.stdout);
    } finally {
      worker.kill('SIGTERM');
      assert.equal(await exited, 0, output);
    }
  });

  it('a .env it cannot read is one line', async () => {
    const bad = mkdtempSync(path.join(tmpdir(), 'dotenv-bad-'));
    try {
      mkdirSync(path.join(bad, '.env')); // present, but a folder: unreadable as a file
      const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          [path.join(DIST, 'cli', 'cli.js'), 'list'],
          { cwd: bad, env: { PATH: process.env.PATH ?? '' } },
          (err, _o, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stderr }),
        ),
      );
      assert.equal(r.code, 1);
      assert.match(r.stderr, /^agent: \.env: cannot read it \(.+\)\n$/);
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });
});
