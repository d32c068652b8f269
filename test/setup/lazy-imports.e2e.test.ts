// What a worker and the CLI load to start: the heavy modules a start does not need are loaded when
// first used (docs/benchmark.md#worker-start). Each process here runs with a preload that lists the
// files it loaded when it exits (test/helpers/loaded-modules.ts); a module imported eagerly again fails.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { final, profile } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { DIST, ensureNamespace } from '../helpers/harness';

const fixture = agentFixture({ queue: 'lazy-imports', worker: false });

const PRELOAD = path.join(DIST, 'test', 'helpers', 'loaded-modules.js');
const MCP_SDK = /node_modules\/@modelcontextprotocol\/sdk\//;
const LEASE = /dist\/activities\/limiter\/llm-lease\.js$/;
const ZOD = /node_modules\/zod\//;
const OPENAI = /node_modules\/openai\//;
const WORKER_SDK = /node_modules\/@temporalio\/worker\//;
/** Every domain's tools: what starting a run checks against, not what a cancel needs. */
const DOMAINS = /dist\/domains\//;

/** The environment that makes a child list what it loaded, and the list's file. */
function listing(): { env: Record<string, string>; loaded: () => string[] } {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lazy-imports-')), 'loaded.txt');
  return {
    env: { NODE_OPTIONS: `--require ${PRELOAD}`, LOADED_MODULES_FILE: file },
    loaded: () => {
      const files = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
      return files;
    },
  };
}

function matching(files: string[], pattern: RegExp): string[] {
  return files.filter((f) => pattern.test(f));
}

describe('lazy imports', () => {
  it('a worker that ran a run without MCP servers or a rate limit never loaded the MCP SDK nor the lease client', async () => {
    const { env, loaded } = listing();
    const worker = fixture.startWorker(env);
    await worker.ready;
    const { result } = await fixture.run([profile(), final('You are on the pro plan.')]);
    assert.equal(result.stop_reason, 'success');
    await worker.stop();
    const files = loaded();
    assert.ok(
      files.some((f) => f.endsWith(path.join('dist', 'worker', 'main.js'))),
      'the listing is not the worker',
    );
    assert.deepEqual(matching(files, MCP_SDK).slice(0, 3), [], 'the MCP SDK was loaded');
    assert.deepEqual(matching(files, LEASE), [], 'the rate limit lease was loaded without a rate limit');
  });

  it('with a rate limit set, the worker loads the lease at start (the listing sees a lazy module when it is used)', async () => {
    const { env, loaded } = listing();
    const worker = fixture.startWorker({ ...env, AGENT_LLM_TPM: '1000000' });
    await worker.ready;
    await worker.stop();
    assert.equal(matching(loaded(), LEASE).length, 1);
  });

  it('`agent list -o json` loads no zod, openai, MCP SDK nor worker SDK', async () => {
    // A namespace of its own: the shared one holds other files' encrypted runs, which `list` would
    // decode (and mark) too.
    const namespace = 'lazy-imports-list';
    await ensureNamespace(fixture.env, namespace);
    const { env, loaded } = listing();
    const cli = await runCli({ ...fixture.env, namespace }, ['list', '-o', 'json'], env);
    assert.equal(cli.code, 0, cli.stderr);
    const files = loaded();
    assert.ok(
      files.some((f) => f.endsWith(path.join('dist', 'cli', 'commands', 'list.js'))),
      'the listing is not the CLI',
    );
    for (const heavy of [ZOD, OPENAI, MCP_SDK, WORKER_SDK])
      assert.deepEqual(matching(files, heavy).slice(0, 3), [], `agent list loaded ${heavy.source}`);
  });

  it('`agent cancel ID` (the kill switch, timed from the moment it is typed) loads no zod, domain, openai, MCP SDK nor worker SDK', async () => {
    // No worker: the run waits for its first workflow task, and the cancel is recorded all the same.
    const { id, handle } = await fixture.start([final('never asked')]);
    const { env, loaded } = listing();
    const cli = await runCli(fixture.env, ['cancel', id, '--no-wait', '--reason', 'lazy imports'], env);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /cancel requested for/);
    const files = loaded();
    assert.ok(
      files.some((f) => f.endsWith(path.join('dist', 'cli', 'commands', 'cancel.js'))),
      'the listing is not the CLI',
    );
    for (const heavy of [ZOD, DOMAINS, OPENAI, MCP_SDK, WORKER_SDK])
      assert.deepEqual(matching(files, heavy).slice(0, 3), [], `agent cancel loaded ${heavy.source}`);
    await handle.terminate('lazy imports: no worker to end it');
  });
});
