// The run's search attributes, on a real server: set at start, kept current at each step and tool
// call, final at the end; the live `state` query says what the run waits for. A namespace without
// the attributes gets runs that work and set none (the client checked), while a run forced to
// upsert them there is stuck failing its workflow task: the danger the check avoids.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { final, tool } from '../../offline-model/scripted-replies';
import { initNamespace } from '../../local-servers/namespace';
import { cancelRun, runResult, runState, startRun, WORKFLOW_TYPE } from '../../client/agent-client';
import { checkSearchAttributes } from '../../client/search-attribute-check';
import type { TemporalEnv } from '../../runtime/temporal-env';
import {
  AGENT_PRINCIPAL,
  AGENT_SEARCH_ATTRIBUTE_DEFINITIONS,
  AGENT_STATUS,
  AGENT_STEP,
  AGENT_STOP_REASON,
  AGENT_TOOL_CALLS,
} from '../../common/temporal/search-attributes';
import { agentInput, connectClient, eventually, testEnv, uniqueId } from '../helpers/harness';
import { startWorkerProcess } from '../../local-servers/worker-process';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { agentFixture } from '../helpers/agent-fixture';

const fixture = agentFixture({ queue: 'sa', workerEnv: { OPENAI_TIMEOUT_SECONDS: '60' } });

async function attributes(id: string) {
  const sa = (await fixture.client.workflow.getHandle(id).describe()).typedSearchAttributes;
  return {
    status: sa.get(AGENT_STATUS),
    stopReason: sa.get(AGENT_STOP_REASON),
    step: sa.get(AGENT_STEP),
    toolCalls: sa.get(AGENT_TOOL_CALLS),
    principal: sa.get(AGENT_PRINCIPAL),
  };
}

describe('search attributes kept current by the workflow', () => {
  it('the dev server, started with flags derived from the table, has every attribute the workflow writes', async () => {
    assert.deepEqual(await checkSearchAttributes(fixture.client), {
      available: true,
      missing: [],
      goal: true,
      waiting: true,
    });
  });

  it('running: status, step, tool calls, principal; the state query says what it waits for; then the final values', async () => {
    const id = uniqueId('sa-run');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    fixture.llm.script(id, async (_req, index) => {
      if (index === 0) return tool('get_user_profile', { user_id: 7 });
      await gate; // the second decision waits until the test has looked
      return final('Done.');
    });
    const handle = await startRun(fixture.client, fixture.env, agentInput({ principal: '7' }), id);
    await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 2, 20_000);

    assert.deepEqual(await attributes(id), {
      status: 'running',
      stopReason: undefined,
      step: 2,
      toolCalls: 1,
      principal: '7',
    });
    const state = await runState(handle);
    assert.equal(state.phase, 'deciding');
    assert.equal(state.waiting_for, "the LLM's decision for step 2");
    assert.equal(state.step, 2);
    assert.deepEqual(state.last_action, { kind: 'tool', name: 'get_user_profile', args: { user_id: 7 } });
    assert.equal(state.remaining.steps, state.budget.max_steps - 2);
    assert.equal(state.remaining.tool_calls, state.budget.max_tool_calls - 1);

    // Findable in the Web UI's and the CLI's terms while it runs.
    await eventually('the running run found by its attributes', async () => {
      for await (const info of fixture.client.workflow.list({
        query: `WorkflowType = '${WORKFLOW_TYPE}' AND AgentStatus = 'running' AND AgentPrincipal = '7' AND AgentStep = 2`,
      })) {
        if (info.workflowId === id) return true;
      }
      return undefined;
    });

    release();
    assert.equal((await runResult(handle)).stop_reason, 'success');
    assert.deepEqual(await attributes(id), {
      status: 'ok',
      stopReason: 'success',
      step: 2,
      toolCalls: 1,
      principal: '7',
    });
    const ended = await runState(handle);
    assert.equal(ended.waiting_for, undefined);
    assert.equal(ended.phase, 'done');
  });

  it('a cancelled run ends with status cancelled; a stopped one with its stop reason', async () => {
    const cancelled = uniqueId('sa-cancel');
    fixture.llm.script(cancelled, [{ hang: true }]);
    const handle = await startRun(fixture.client, fixture.env, agentInput({ budget: { max_seconds: 120 } }), cancelled);
    await fixture.llm.waitFor((r) => r.workflowId === cancelled && r.step === 1, 20_000);
    await cancelRun(fixture.client, cancelled, 'search attribute test');
    assert.equal((await runResult(handle)).stop_reason, 'cancelled');
    assert.deepEqual(await attributes(cancelled), {
      status: 'cancelled',
      stopReason: 'cancelled',
      step: 1,
      toolCalls: 0,
      principal: '42',
    });

    const looped = uniqueId('sa-loop');
    fixture.llm.script(looped, [
      tool('search_policy', { query: 'refund' }),
      tool('search_policy', { query: 'refund' }),
    ]);
    assert.equal(
      // No repeat allowed: the second identical read is the loop.
      (await runResult(await startRun(fixture.client, fixture.env, agentInput({ budget: { max_repeats: 0 } }), looped)))
        .stop_reason,
      'loop_detected',
    );
    assert.deepEqual(await attributes(looped), {
      status: 'stopped',
      stopReason: 'loop_detected',
      step: 2,
      toolCalls: 1,
      principal: '42',
    });
  });
});

describe('a namespace without the agent search attributes', () => {
  const namespace = uniqueId('no-attrs');
  let nsEnv: TemporalEnv;
  let nsClient: Client;
  let nsWorker: WorkerProcess | undefined;

  before(async () => {
    await fixture.client.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    nsEnv = testEnv(uniqueId('no-attrs'), { namespace });
    nsClient = await connectClient(nsEnv);
    await eventually(
      'the new namespace usable',
      async () => {
        await nsClient.workflowService.describeNamespace({ namespace });
        for await (const _ of nsClient.workflow.list({ query: `WorkflowType = 'x'` })) break;
        return true;
      },
      60_000,
    );
  });

  after(async () => {
    await nsWorker?.stop();
    await nsClient?.connection.close();
  });

  it('runs there work and set none of them; a run forced to upsert them would be stuck', async () => {
    const check = await checkSearchAttributes(nsClient);
    assert.equal(check.available, false);
    assert.deepEqual(check.missing.sort(), AGENT_SEARCH_ATTRIBUTE_DEFINITIONS.map((d) => `${d.name}=${d.type}`).sort());

    nsWorker = startWorkerProcess(nsEnv, { OPENAI_BASE_URL: fixture.llm.baseUrl, OPENAI_TIMEOUT_SECONDS: '60' });
    await nsWorker.ready;

    const id = uniqueId('no-attrs-run');
    fixture.llm.script(id, [tool('get_user_profile', { user_id: 42 }), final('Done.')]);
    const handle = await startRun(nsClient, nsEnv, agentInput(), id);
    assert.equal((await runResult(handle)).stop_reason, 'success');
    const description = await handle.describe();
    assert.equal(description.typedSearchAttributes.get(AGENT_STATUS), undefined);
    const events = (await handle.fetchHistory()).events ?? [];
    // No Agent* attribute is written.
    const upserted = events.flatMap((e) =>
      Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}),
    );
    assert.deepEqual(
      upserted.filter((name) => name.startsWith('Agent')),
      [],
    );
    assert.equal(events.filter((e) => e.workflowTaskFailedEventAttributes).length, 0);

    // The negative control: bypass the check and the first workflow task fails, again and again.
    const forced = uniqueId('forced');
    fixture.llm.script(forced, [final('never')]);
    const forcedHandle = await nsClient.workflow.start(WORKFLOW_TYPE, {
      taskQueue: nsEnv.taskQueue,
      workflowId: forced,
      args: [{ ...agentInput(), search_attributes: true }],
    });
    const failure = await eventually('a failed workflow task', async () => {
      const history = (await forcedHandle.fetchHistory()).events ?? [];
      return history.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes ?? undefined;
    });
    assert.match(String(failure.failure?.message ?? ''), /search attribute/i);
    assert.equal((await forcedHandle.describe()).status.name, 'RUNNING');
    await forcedHandle.terminate('negative control done');
  });

  it('the deployment init script registers every attribute from the table there, and a second run changes nothing', async () => {
    const lines: string[] = [];
    await initNamespace(nsClient.connection, namespace, (line) => lines.push(line));
    const fresh = await connectClient(nsEnv);
    try {
      assert.deepEqual(await checkSearchAttributes(fresh), { available: true, missing: [], goal: true, waiting: true });
    } finally {
      await fresh.connection.close();
    }
    for (const d of AGENT_SEARCH_ATTRIBUTE_DEFINITIONS)
      assert.ok(lines.includes(`search attribute ${d.name} registered`));

    lines.length = 0;
    await initNamespace(nsClient.connection, namespace, (line) => lines.push(line));
    for (const d of AGENT_SEARCH_ATTRIBUTE_DEFINITIONS)
      assert.ok(lines.includes(`search attribute ${d.name} already registered`), lines.join('\n'));
  });
});
