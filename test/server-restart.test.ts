// Durability across a Temporal server crash: the dev server is killed (SIGKILL) in the middle of a
// run and restarted on the same SQLite file; the same worker process reconnects and the run
// completes with every step intact.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ScriptedLlmServer } from '../scripts/scripted-llm-server';
import type { Reply } from '../scripts/scripted-llm-server';
import { startDevServer } from '../scripts/dev-server';
import type { DevServer } from '../scripts/dev-server';
import { runResult, startRun } from '../client/agent-client';
import type { TemporalEnv } from '../runtime/temporal-env';
import { agentInput, connectClient, startWorkerProcess, uniqueId } from './helpers/harness';
import type { WorkerProcess } from './helpers/harness';

let server: DevServer;
let llm: ScriptedLlmServer;
let worker: WorkerProcess;
let env: TemporalEnv;

// Replies by step, so a retried attempt of a step gets the same answer.
const byStep: Record<number, Reply> = {
  1: { action: { kind: 'tool', name: 'get_user_profile', args: { user_id: 42 } } },
  2: { action: { kind: 'tool', name: 'get_user_billing', args: { user_id: 42 } }, delayMs: 1_500 },
  3: { action: { kind: 'tool', name: 'search_policy', args: { query: 'refund' } } },
  4: { action: { kind: 'final', answer: 'Yes, USD 49.00.' } },
};

before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-restart-'));
  server = await startDevServer({ dbFile: path.join(dir, 'temporal.sqlite'), cliPath: process.env.TEMPORAL_CLI_PATH });
  llm = await ScriptedLlmServer.start({
    defaultScript: (req) => byStep[Number(req.idempotencyKey?.split(':').pop())] ?? { status: 400 },
  });
  env = { address: server.address, namespace: server.namespace, taskQueue: uniqueId('restart'), uiUrl: server.uiUrl };
  worker = startWorkerProcess(env, { OPENAI_BASE_URL: llm.baseUrl });
  await worker.ready;
});

after(async () => {
  await worker?.stop();
  await llm?.close();
  await server?.stop();
});

describe('Temporal server restart', () => {
  it('a run survives the server being killed and restarted on the same SQLite file', async () => {
    const id = uniqueId('restart');
    let client = await connectClient(env);
    await startRun(client, env, agentInput({ budget: { max_seconds: 300 } }), id);

    // Crash the server while step 2's decision is in flight.
    await llm.waitFor((r) => r.workflowId === id && r.step === 2, 30_000);
    const pidBefore = server.pid;
    await client.connection.close();
    await server.kill();
    await server.restart();
    assert.notEqual(server.pid, pidBefore, 'a new server process');

    client = await connectClient(env);
    try {
      const result = await runResult(client.workflow.getHandle(id));
      assert.equal(result.stop_reason, 'success');
      assert.deepEqual(
        result.trace.map((t) => [t.step, t.tool, t.ok]),
        [
          [1, 'get_user_profile', true],
          [2, 'get_user_billing', true],
          [3, 'search_policy', true],
        ],
      );
      assert.equal(result.answer, 'Yes, USD 49.00.');
    } finally {
      await client.connection.close();
    }
  });
});
