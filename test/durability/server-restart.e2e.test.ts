// Durability across a Temporal server crash: the server is killed (SIGKILL) in the middle of a run
// and restarted on the same database (the dev server's SQLite file, or PostgreSQL with
// `npm test -- --server postgres`); the same worker process reconnects and the run completes with
// every step intact.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { billing, byStep, final, policy, profile } from '../../offline-model/scripted-replies';
import type { TemporalServerHandle } from '../../local-servers/server-handle';
import { serverEnv, startOwnServer, stopOwnServer, testServerKind } from '../helpers/test-server';
import { runResult, startRun } from '../../client/agent-client';
import { agentInput, connectClient, REFUND_SCENARIO_ROWS, traceRows, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';

let server: TemporalServerHandle;

// A server of this file's own (it gets killed): started before the fixture, stopped after it. The
// model replies by step, so a retried attempt of a step gets the same answer.
const fixture = agentFixture({
  queue: 'restart',
  server: () => serverEnv(server),
  llm: {
    defaultScript: byStep({
      1: profile(),
      2: billing(42, { delayMs: 1_500 }),
      3: policy('refund'),
      4: final('Yes, USD 49.00.'),
    }),
  },
  prepare: async () => {
    server = await startOwnServer();
  },
});
after(() => stopOwnServer(server));

describe('Temporal server restart', () => {
  it(`a run survives the server being killed and restarted on the same database (${testServerKind()} server)`, async () => {
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
