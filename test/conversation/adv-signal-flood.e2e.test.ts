// Adversary: docs/security.md promises that no payload any client sends to a run's Signals (huge
// ones, several of them) fails a workflow task or wedges the run. A Signal cannot be refused: each
// one enters the history, read or dropped. Huge Signals from a client that holds no key at all, sent
// to a run that waits for its customer, grow its history until Temporal ends the run.
//
// The flood is paced by the worker (a state query after each Signal answers once the worker has
// taken it in): a run can only hand its history on (continue-as-new) in a workflow task during which
// no event arrives, and Temporal fails a task outright when more than 2 MB of events arrive during it
// (history.maximumBufferedEventsSizeInBytes). A sender faster than the worker's tasks thus ends any
// run at the 50 MB history limit, whatever its code: only the namespace's access control and rate
// limits bound that (docs/security.md). The operator's inbox (AgentWaiting) shows the wait all along.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { agentFixture } from '../helpers/agent-fixture';
import { codecEnv, newKey, withoutCodec } from '../helpers/codec';
import { connectClient, eventually } from '../helpers/harness';
import { final, message } from '../../offline-model/scripted-replies';
import { runResult } from '../../client/agent-client';
import { ATTEMPT_CHARGED_SIGNAL, extendUpdate, sayUpdate, stateQuery } from '../../common/agent-messages';
import { AGENT_WAITING } from '../../common/temporal/search-attributes';

const keys = codecEnv({ k1: newKey() }, 'k1');
const fixture = agentFixture({
  queue: 'adv-signal-flood',
  workerEnv: keys,
  clientEnv: { ...withoutCodec(), ...keys },
});

/** Under Temporal's 2 MB limit for one payload; 40 of them pass its 50 MB limit for one history. */
const SIGNAL_BYTES = 1_500_000;
const SIGNALS = 40;

/** 40 huge Signals from a keyless client, each sent once the worker has taken in the one before. */
async function flood(id: string): Promise<void> {
  const attacker = await connectClient(fixture.env, withoutCodec());
  try {
    const target = attacker.workflow.getHandle(id);
    for (let i = 0; i < SIGNALS; i++) {
      const junk = randomBytes(SIGNAL_BYTES * 0.75).toString('base64');
      try {
        await target.signal(ATTEMPT_CHARGED_SIGNAL, junk);
        // The run's latest run (a continue-as-new chain moves on), asked with the key.
        await fixture.client.workflow.getHandle(id).query(stateQuery);
      } catch {
        break; // the server refused it (the run is gone, or it refuses more): what follows says which
      }
    }
  } finally {
    await attacker.connection.close();
  }
}

/**
 * The AgentWaiting values a run of the chain upserted, in order (search attributes are plain JSON).
 * One event a page: a page of several huge Signals passes gRPC's 4 MB message limit.
 */
async function waitingUpserts(id: string, runId: string): Promise<string[]> {
  const values: string[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await fixture.client.workflowService.getWorkflowExecutionHistory({
      namespace: fixture.env.namespace,
      execution: { workflowId: id, runId },
      maximumPageSize: 1,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const e of page.history?.events ?? []) {
      const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
      const field = fields?.[AGENT_WAITING.name];
      if (field?.data) values.push(JSON.parse(Buffer.from(field.data).toString('utf8')) as string);
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return values;
}

/** The inbox across the hand-over: the next run still says `kind`; the first never said `none` before it. */
async function inboxKept(id: string, firstRunId: string, kind: string): Promise<void> {
  const d = await fixture.client.workflow.getHandle(id).describe();
  assert.equal(d.typedSearchAttributes.get(AGENT_WAITING), kind);
  assert.deepEqual(await waitingUpserts(id, firstRunId), [kind]);
}

describe('adversary: huge Signals to an encrypted run', () => {
  it('a run waiting for its customer survives 40 huge llm_attempt_charged Signals from a keyless client', async () => {
    const { id, handle } = await fixture.start([message('Hello, how can I help?'), final('Glad to help.')], {
      conversation: { idle_timeout_seconds: 600 },
    });
    const before = await eventually('the run to wait for its customer', async () => {
      const s = await handle.query(stateQuery);
      return s.phase === 'awaiting_customer' ? s : undefined;
    });
    const firstRunId = (await fixture.client.workflow.getHandle(id).describe()).runId;

    await flood(id);

    await new Promise((r) => setTimeout(r, 2000));
    const d = await fixture.client.workflow.getHandle(id).describe();
    assert.equal(d.status.name, 'RUNNING', `the run was ended by the Signals: ${d.status.name}`);
    const state = await handle.query(stateQuery);
    assert.equal(state.phase, 'awaiting_customer');
    // Handed on: the next run waits for the same message until the same deadline.
    assert.notEqual(d.runId, firstRunId, 'the run did not continue as new');
    assert.equal(state.conversation?.idle_expires_at, before.conversation?.idle_expires_at);
    assert.equal(state.conversation?.agent_messages, 1);
    await inboxKept(id, firstRunId, 'customer');
    // The customer's answer reaches the waiting run, and the model reads it.
    const latest = fixture.client.workflow.getHandle(id);
    await latest.executeUpdate(sayUpdate, { args: [{ text: 'Where is my order?' }] });
    const result = await runResult(latest);
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.conversation?.customer_messages, 1);
    assert.equal(fixture.llm.requests(id).length, 2);
    assert.equal((await latest.describe()).typedSearchAttributes.get(AGENT_WAITING), 'none');
  });

  it('a run waiting for a top-up survives them too: the next run waits until the same deadline, then takes the top-up', async () => {
    const { id, handle } = await fixture.start([final('Done with the extra step.')], {
      budget: { max_steps: 1 },
      topup_wait_seconds: 600,
    });
    const before = await eventually('the run to wait for a top-up', async () => {
      const s = await handle.query(stateQuery);
      return s.awaiting_topup ? s.awaiting_topup : undefined;
    });
    const firstRunId = (await fixture.client.workflow.getHandle(id).describe()).runId;

    await flood(id);

    const latest = fixture.client.workflow.getHandle(id);
    const d = await latest.describe();
    assert.equal(d.status.name, 'RUNNING', `the run was ended by the Signals: ${d.status.name}`);
    assert.notEqual(d.runId, firstRunId, 'the run did not continue as new');
    const after = (await latest.query(stateQuery)).awaiting_topup;
    assert.equal(after?.expires_at, before.expires_at, 'the handed-on top-up wait has another deadline');
    await inboxKept(id, firstRunId, 'topup');
    await latest.executeUpdate(extendUpdate, { args: [{ steps: 1, reason: 'one more step' }] });
    const result = await runResult(latest);
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.extensions?.length, 1);
    assert.equal((await latest.describe()).typedSearchAttributes.get(AGENT_WAITING), 'none');
  });
});
