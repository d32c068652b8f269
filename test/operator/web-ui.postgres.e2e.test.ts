// The Web UI of the production topology (run by `npm test -- --server postgres`): the ui-server of
// docker-compose.yml's temporalio/ui version, built from source and configured by its image's own
// template, shows the suite's runs on the PostgreSQL-backed server with the agent's search attributes.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startUiServer } from '../../local-servers/ui-server';
import type { UiServer } from '../../local-servers/ui-server';
import { final, profile } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';

let ui: UiServer;

const fixture = agentFixture({
  queue: 'pg-ui',
  setup: async (f) => {
    ui = await startUiServer({
      address: f.env.address,
      namespace: f.env.namespace,
      logDir: mkdtempSync(path.join(tmpdir(), 'agent-ui-')),
    });
  },
});
after(() => ui?.stop());

interface UiExecution {
  execution?: { workflowId?: string };
  status?: string;
  searchAttributes?: { indexedFields?: Record<string, unknown> };
}

describe('Web UI on the PostgreSQL-backed server', () => {
  it("lists a finished run with its status and the agent's search attributes", async () => {
    const { id, result } = await fixture.run([profile(42), final('Done.')]);
    assert.equal(result.stop_reason, 'success');
    const query = encodeURIComponent(`WorkflowId = '${id}'`);
    const executions = await eventually(
      'the run in the Web UI',
      async () => {
        const r = await fetch(`${ui.url}/api/v1/namespaces/${fixture.env.namespace}/workflows?query=${query}`);
        const body = (await r.json()) as { executions?: UiExecution[] };
        // Visibility is eventually consistent: the run can be listed before its close is.
        const closed = body.executions?.[0]?.status === 'WORKFLOW_EXECUTION_STATUS_COMPLETED';
        return closed ? body.executions : undefined;
      },
      30_000,
    );
    assert.equal(executions[0]!.execution?.workflowId, id);
    assert.equal(executions[0]!.status, 'WORKFLOW_EXECUTION_STATUS_COMPLETED');
    const fields = Object.keys(executions[0]!.searchAttributes?.indexedFields ?? {});
    for (const name of ['AgentStatus', 'AgentStopReason', 'AgentStep'])
      assert.ok(fields.includes(name), `${name} in ${fields.join(', ')}`);

    const page = await fetch(`${ui.url}/namespaces/${fixture.env.namespace}/workflows/${id}`);
    assert.equal(page.status, 200, 'the run page is served');
  });
});
