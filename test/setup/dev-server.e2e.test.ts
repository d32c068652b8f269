import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { isServerReachable, startDevServer, type DevServer } from '../../local-servers/dev-server';
import { AGENT_SEARCH_ATTRIBUTE_DEFINITIONS as AGENT_SEARCH_ATTRIBUTES } from '../../common/temporal/search-attributes';
import { freePort } from '../../local-servers/free-port';
import { findOrBuildTemporalCli } from '../../local-servers/temporal-cli';

async function withClient<T>(
  server: DevServer,
  fn: (client: Client, connection: Connection) => Promise<T>,
): Promise<T> {
  const connection = await Connection.connect({ address: server.address });
  try {
    return await fn(new Client({ connection, namespace: server.namespace }), connection);
  } finally {
    await connection.close();
  }
}

describe('temporal CLI discovery', () => {
  it('rejects a TEMPORAL_CLI_PATH that is not an executable', async () => {
    const saved = process.env.TEMPORAL_CLI_PATH;
    process.env.TEMPORAL_CLI_PATH = '/nonexistent/temporal';
    try {
      await assert.rejects(
        findOrBuildTemporalCli(() => undefined),
        /TEMPORAL_CLI_PATH=\/nonexistent\/temporal is not an executable/,
      );
    } finally {
      if (saved === undefined) delete process.env.TEMPORAL_CLI_PATH;
      else process.env.TEMPORAL_CLI_PATH = saved;
    }
  });
});

describe('dev server (own instance, own SQLite file)', { timeout: 180_000 }, () => {
  let server: DevServer;

  before(async () => {
    server = await startDevServer({ namespace: 'devserver-test' });
  });
  after(async () => {
    await server?.stop();
  });

  it('answers on the reported address and namespace', async () => {
    assert.match(server.address, /^127\.0\.0\.1:\d+$/);
    assert.equal(server.uiUrl, `http://127.0.0.1:${server.uiPort}`);
    assert.notEqual(server.port, server.uiPort);
    assert.ok(await isServerReachable(server.address, 'devserver-test'));
    assert.equal(await isServerReachable(server.address, 'no-such-namespace'), false);
    assert.equal(await isServerReachable(`127.0.0.1:${await freePort()}`), false);
    const ui = await fetch(server.uiUrl);
    assert.equal(ui.status, 200);
  });

  it('registers the agent search attributes', async () => {
    await withClient(server, async (_client, connection) => {
      const res = await connection.operatorService.listSearchAttributes({ namespace: server.namespace });
      for (const sa of AGENT_SEARCH_ATTRIBUTES) {
        assert.equal(
          res.customAttributes[sa.name],
          encodeSearchAttributeIndexedValueType(sa.type === 'Int' ? 'INT' : 'KEYWORD'),
          sa.name,
        );
      }
    });
  });

  it('refuses to start on a port that is taken', async () => {
    await assert.rejects(startDevServer({ port: server.port, cliPath: server.cliPath }), /already in use/);
  });

  it('keeps executions across kill() + restart() (SQLite persistence)', async (t) => {
    const workflowId = `devserver-test-${randomUUID()}`;
    const runId = await withClient(server, async (client) => {
      // No worker polls this queue: the execution just sits in RUNNING, which is all we need.
      const handle = await client.workflow.start('noSuchWorkflowType', {
        taskQueue: `no-worker-${randomUUID()}`,
        workflowId,
      });
      const desc = await handle.describe();
      assert.equal(desc.status.name, 'RUNNING');
      return handle.firstExecutionRunId;
    });

    const oldPid = server.pid;
    await server.kill();
    assert.equal(await isServerReachable(server.address, server.namespace), false);

    const t0 = Date.now();
    await server.restart();
    t.diagnostic(`restart after SIGKILL healthy in ${Date.now() - t0} ms`);
    assert.notEqual(server.pid, oldPid);

    await withClient(server, async (client, connection) => {
      const desc = await client.workflow.getHandle(workflowId).describe();
      assert.equal(desc.runId, runId);
      assert.equal(desc.status.name, 'RUNNING');
      assert.equal(desc.type, 'noSuchWorkflowType');
      const res = await connection.operatorService.listSearchAttributes({ namespace: server.namespace });
      for (const sa of AGENT_SEARCH_ATTRIBUTES) assert.ok(res.customAttributes[sa.name], `${sa.name} after restart`);
    });
  });

  it('stop() shuts it down', async () => {
    await server.stop();
    assert.equal(await isServerReachable(server.address, server.namespace), false);
    const { code, signal } = await server.exited();
    assert.ok(code !== null || signal !== null);
  });
});
