// LOG_FORMAT=json as an operator's log shipper reads it: every line a project process writes (the
// worker's stdout and stderr, the MCP server's, the codec server's) is one JSON object; the worker
// logs a line when a run starts and when it ends (id, domain, principal hash, stop reason, steps,
// cost); and an operator's ordinary `agent status` and `agent watch`, on a live run and on an ended
// one, leave no WARN in the worker's log.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sha256Hex } from '../../common/tools/hash';
import { final, profile } from '../../offline-model/scripted-replies';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { codecEnv, newKey, newToken, startCodecServerProcess } from '../helpers/codec';
import { DIST, eventually } from '../helpers/harness';

const fixture = agentFixture({ queue: 'json-logs', worker: false });

/** Each non-empty line parsed; a line that is not one JSON object fails the test, naming it. */
function records(stream: string, what: string): Array<Record<string, unknown>> {
  return stream
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      let record: unknown;
      assert.doesNotThrow(() => (record = JSON.parse(line)), `${what}: not JSON: ${line}`);
      assert.ok(record !== null && typeof record === 'object' && !Array.isArray(record), `${what}: ${line}`);
      const r = record as Record<string, unknown>;
      assert.match(String(r.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, `${what}: ${line}`);
      assert.ok(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'].includes(String(r.level)), `${what}: ${line}`);
      assert.equal(typeof r.message, 'string', `${what}: ${line}`);
      return r;
    });
}

/** A process's stdout and stderr, kept apart. */
function capture(proc: { stdout: NodeJS.ReadableStream | null; stderr: NodeJS.ReadableStream | null }) {
  const out = { stdout: '', stderr: '' };
  proc.stdout?.on('data', (c: Buffer) => (out.stdout += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (out.stderr += c.toString()));
  return out;
}

describe('LOG_FORMAT=json', { concurrency: true }, () => {
  it('the worker: every line JSON, a line per run start and end, no WARN after status and watch', async () => {
    const worker = fixture.startWorker({ LOG_FORMAT: 'json' });
    const out = capture(worker.proc);
    await worker.ready;

    // The run's second decision waits until status and watch have seen it live.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const script = async (_req: unknown, index: number): Promise<Reply> =>
      index === 0 ? profile() : (await held, final('User 42 is on the pro plan.'));
    const { id, handle } = await fixture.start(script);
    await eventually('the run deciding its second step', async () => {
      const status = await runCli(fixture.env, ['status', id, '-o', 'json']);
      const state = (JSON.parse(status.stdout) as { state: { step: number; phase: string } | null }).state;
      return state && state.step >= 1 && state.phase === 'deciding' ? true : undefined;
    });
    let watched = '';
    const watch = runCli(fixture.env, ['watch', id], {}, 60_000, (chunk) => (watched += chunk));
    await eventually('watch attached', () => (/get_user_profile/.test(watched) ? true : undefined));
    release();
    const live = await watch;
    assert.equal(live.code, 0, live.stderr);
    const result = await handle.result();
    assert.equal(result.stop_reason, 'success');
    // The ended run, as an operator looks back at it.
    for (const args of [
      ['status', id],
      ['watch', id],
      ['result', id],
    ]) {
      const after = await runCli(fixture.env, args);
      assert.equal(after.code, 0, `${args.join(' ')}: ${after.stderr}`);
    }
    await worker.stop(); // everything flushed

    const lines = [...records(out.stdout, 'worker stdout'), ...records(out.stderr, 'worker stderr')];
    assert.ok(lines.some((r) => r.component === 'worker' && /^workflow code from/.test(String(r.message))));
    assert.ok(lines.some((r) => r.component === 'worker' && /^worker ready: /.test(String(r.message))));
    assert.ok(lines.some((r) => r.component === 'worker' && r.message === 'worker stopped'));
    const hash = sha256Hex('42').slice(0, 16);
    const ofRun = lines.filter((r) => r.workflowId === id);
    const started = ofRun.filter((r) => r.message === 'run started');
    assert.deepEqual(
      started.map((r) => [r.domain, r.principal_hash]),
      [['support', hash]],
      JSON.stringify(ofRun),
    );
    const ended = ofRun.filter((r) => r.message === 'run ended');
    assert.deepEqual(
      ended.map((r) => [r.domain, r.principal_hash, r.status, r.stop_reason, r.steps, r.tool_calls, r.cost_usd]),
      [['support', hash, 'ok', 'success', 2, 1, result.usage.cost_usd]],
      JSON.stringify(ofRun),
    );
    assert.ok(!lines.some((r) => 'principal' in r), 'never the raw principal');
    const warnings = lines.filter((r) => r.level === 'WARN' || r.level === 'ERROR');
    assert.deepEqual(warnings, [], "no WARN or ERROR for an operator's ordinary calls");
  });

  it('the MCP server: its lines are JSON, its refusal too', async () => {
    const main = path.join(DIST, 'mcp-server', 'main.js');
    const refused = spawn(process.execPath, [main, '--domain', 'no-such-domain'], {
      env: { ...process.env, LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const refusedOut = capture(refused);
    const code = await new Promise<number | null>((resolve) => refused.once('exit', resolve));
    assert.equal(code, 2);
    const refusal = records(refusedOut.stderr, 'mcp stderr');
    assert.equal(refusal.length, 1, refusedOut.stderr);
    assert.equal(refusal[0]!.level, 'ERROR');
    assert.equal(refusal[0]!.component, 'mcp');

    const server = spawn(process.execPath, [main, '--domain', 'support', '--http', '0'], {
      env: { ...process.env, ...fixture.baseWorkerEnv, LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = capture(server);
    const exited = new Promise((resolve) => server.once('exit', resolve));
    try {
      await eventually('the serving line', () => (/serving the support domain at/.test(out.stderr) ? true : undefined));
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
    const lines = [...records(out.stdout, 'mcp stdout'), ...records(out.stderr, 'mcp stderr')];
    assert.ok(
      lines.some((r) => r.component === 'mcp' && /^serving the support domain at http/.test(String(r.message))),
    );
  });

  it('the codec server: its lines are JSON', async () => {
    const codec = await startCodecServerProcess({
      ...codecEnv({ k1: newKey() }, 'k1'),
      AGENT_CODEC_TOKEN: newToken(),
      AGENT_CODEC_CORS_ORIGIN: 'http://localhost:8233',
      LOG_FORMAT: 'json',
    });
    await codec.stop();
    const lines = records(codec.output(), 'codec server');
    assert.ok(
      lines.some((r) => r.component === 'codec-server' && /^codec server listening on/.test(String(r.message))),
    );
  });
});
