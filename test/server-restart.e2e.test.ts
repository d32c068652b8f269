// Durability across a Temporal server crash: the dev server is killed (SIGKILL) in the middle of a
// run and restarted on the same SQLite file; the same worker process reconnects and the run
// completes with every step intact.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { billing, byStep, final, policy, profile } from '../scripts/scripted-replies';
import { startDevServer } from '../scripts/dev-server';
import type { DevServer } from '../scripts/dev-server';
import { runResult, startRun } from '../client/agent-client';
import { agentInput, connectClient, REFUND_SCENARIO_ROWS, traceRows, uniqueId } from './helpers/harness';
import { agentFixture } from './helpers/agent-fixture';

let server: DevServer;

// A server of this file's own (it gets killed): started before the fixture, stopped after it. The
// model replies by step, so a retried attempt of a step gets the same answer.
const fixture = agentFixture({
  queue: 'restart',
  server: () => server,
  llm: {
    defaultScript: byStep({
      1: profile(),
      2: billing(42, { delayMs: 1_500 }),
      3: policy('refund'),
      4: final('Yes, USD 49.00.'),
    }),
  },
  prepare: async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agent-restart-'));
    server = await startDevServer({
      dbFile: path.join(dir, 'temporal.sqlite'),
      cliPath: process.env.TEMPORAL_CLI_PATH,
    });
  },
});
after(() => server?.stop());

describe('Temporal server restart', () => {
  it('a run survives the server being killed and restarted on the same SQLite file', async () => {
    const id = uniqueId('restart');
    await startRun(fixture.client, fixture.env, agentInput({ budget: { max_seconds: 300 } }), id);

    // Crash the server while step 2's decision is in flight.
    await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 2, 30_000);
    const pidBefore = server.pid;
    await server.kill();
    await server.restart();
    assert.notEqual(server.pid, pidBefore, 'a new server process');

    const client = await connectClient(fixture.env);
    try {
      const result = await runResult(client.workflow.getHandle(id));
      assert.equal(result.stop_reason, 'success');
      assert.deepEqual(traceRows(result), REFUND_SCENARIO_ROWS);
      assert.equal(result.answer, 'Yes, USD 49.00.');
    } finally {
      await client.connection.close();
    }
  });
});
