// Every port a local process opens can be chosen: the dev server's four (`npm run server` with
// TEMPORAL_PORT, TEMPORAL_UI_PORT, TEMPORAL_HTTP_PORT, TEMPORAL_METRICS_PORT; its SQLite file
// TEMPORAL_DEV_DB), the offline model's (AGENT_OFFLINE_MODEL_PORT) and the SDK exporter's
// (AGENT_SDK_METRICS_PORT). Each is honored by a real process, and a bad value stops it with one line.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isServerReachable } from '../../local-servers/dev-server';
import { freePort } from '../../local-servers/free-port';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually, REPO_ROOT } from '../helpers/harness';

const fixture = agentFixture({ queue: 'ports', worker: false });

/** Any HTTP answer from the port (a refused connection throws). */
async function answers(url: string): Promise<number> {
  return (await fetch(url, { signal: AbortSignal.timeout(5_000) })).status;
}

/** Runs a compiled script to its end (it must fail fast here; killed after 60 s) and returns its exit code and output. */
function runScript(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist', script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  // A process that does not stop on its own has not refused its setting: end it, and say so.
  const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(deadline);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe('ports', () => {
  it('the worker serves the offline model on AGENT_OFFLINE_MODEL_PORT and the SDK exporter on AGENT_SDK_METRICS_PORT', async () => {
    const model = await freePort();
    const sdk = await freePort([model]);
    await assert.rejects(answers(`http://127.0.0.1:${model}/v1/models`), 'the port is free before the worker starts');
    const worker = fixture.startWorker({
      OPENAI_BASE_URL: 'offline',
      AGENT_OFFLINE_MODEL_PORT: String(model),
      AGENT_SDK_METRICS_PORT: String(sdk),
    });
    try {
      await worker.ready;
      assert.equal(typeof (await answers(`http://127.0.0.1:${model}/v1/models`)), 'number');
      const text = await eventually('the SDK exporter on its port', async () => {
        const response = await fetch(`http://127.0.0.1:${sdk}/metrics`);
        return response.ok ? response.text() : undefined;
      });
      assert.match(text, /^temporal_/m);
    } finally {
      await worker.stop();
    }
  });

  it('a bad or taken AGENT_OFFLINE_MODEL_PORT stops the worker with one line', async () => {
    for (const [value, message] of [
      ['http', 'worker: AGENT_OFFLINE_MODEL_PORT must be a port number (0 for any free port), got "http"'],
      ['70000', 'worker: AGENT_OFFLINE_MODEL_PORT must be a port number (0 for any free port), got "70000"'],
    ]) {
      const out = await runScript('worker/main.js', { OPENAI_BASE_URL: 'offline', AGENT_OFFLINE_MODEL_PORT: value! });
      assert.equal(out.code, 1, out.stderr);
      assert.equal(out.stderr.trim(), message);
    }
    // Taken: by the dev server's own gRPC port.
    const taken = fixture.env.address.split(':').at(-1)!;
    const out = await runScript('worker/main.js', {
      OPENAI_BASE_URL: 'offline',
      AGENT_OFFLINE_MODEL_PORT: taken,
      TEMPORAL_ADDRESS: fixture.env.address,
      TEMPORAL_NAMESPACE: fixture.env.namespace,
      TEMPORAL_TASK_QUEUE: fixture.env.taskQueue,
      AGENT_METRICS_PORT: 'off',
    });
    assert.equal(out.code, 1, out.stderr);
    assert.equal(
      out.stderr.trim(),
      `worker: the offline model cannot listen on 127.0.0.1 port ${taken} (EADDRINUSE); set AGENT_OFFLINE_MODEL_PORT to a free port, 0 for any`,
    );
  });

  it('npm run server listens on the four ports it is given, and refuses a bad one in one line', async () => {
    const bad = await runScript('scripts/server.js', { TEMPORAL_METRICS_PORT: 'nine' });
    assert.equal(bad.code, 1);
    assert.equal(
      bad.stderr.trim(),
      'server: TEMPORAL_METRICS_PORT must be a port number (0 for any free port), got "nine"',
    );

    const ports: number[] = [];
    for (let i = 0; i < 4; i++) ports.push(await freePort(ports));
    const [grpc, ui, http, metrics] = ports as [number, number, number, number];
    const dbFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'ports-')), 'dev.sqlite');
    const server = spawn(process.execPath, [path.join(REPO_ROOT, 'dist', 'scripts', 'server.js')], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: '',
        TEMPORAL_PORT: String(grpc),
        TEMPORAL_UI_PORT: String(ui),
        TEMPORAL_HTTP_PORT: String(http),
        TEMPORAL_METRICS_PORT: String(metrics),
        TEMPORAL_DEV_DB: dbFile,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout.on('data', (c: Buffer) => (output += c.toString()));
    server.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    try {
      await eventually('the dev server ready', () => (output.includes('Press Ctrl-C') ? true : undefined), 90_000);
      assert.ok(output.includes(`address:   127.0.0.1:${grpc}`), output);
      assert.ok(output.includes(`Web UI:    http://127.0.0.1:${ui}`), output);
      assert.ok(await isServerReachable(`127.0.0.1:${grpc}`, 'default'));
      assert.equal(await answers(`http://127.0.0.1:${ui}/`), 200);
      assert.equal(await answers(`http://127.0.0.1:${http}/api/v1/namespaces/default`), 200);
      assert.match(await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text(), /^# (HELP|TYPE) /m);
    } finally {
      server.kill('SIGINT');
      assert.equal(await exited, 0, output);
    }
  });
});
