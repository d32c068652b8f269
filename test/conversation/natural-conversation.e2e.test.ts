// A natural conversation never trips the runtime (workflows/agent/repeats.ts): a real dev server, a real
// worker, the scripted model behaving as real ones do (it asks for clarification, looks an order up
// again after the customer corrects the id or asks to check, double-checks before a write, reads
// the order after the write) and τ²-bench's shop database. A read repeated with nothing new in
// between is answered from the earlier result without scheduling the tool's activity; one that
// repeats forever ends loop_detected after the bound. A write the customer declined is not a made
// call: proposed again, the customer is asked again, and a yes makes it once.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { runResult, runState } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import type { AgentInput, AgentResult } from '../../common/types';
import type { reactAgent } from '../../workflows/agent/agent';
import { countAppliedWrites, readRetailDb } from '../../domains/retail/backend/open';
import { retailTools } from '../../domains/retail/tools/index';
import { byStep, final, message, tool } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';
import { scheduledActivityTypes } from '../helpers/history-scan';

const RETAIL_DB = path.join(mkdtempSync(path.join(os.tmpdir(), 'natural-e2e-')), 'retail.sqlite');
const fixture = agentFixture({ queue: 'natural', workerEnv: { AGENT_RETAIL_DB: RETAIL_DB } });

// From τ²-bench's retail database: a customer with a pending order.
const IVAN = { email: 'ivan.santos3158@example.com', order: '#W8770097' };
const WRONG_ORDER = '#W0000000';
const CANCEL = { order_id: IVAN.order, reason: 'no longer needed' };
const lookUp = (order_id: string) => tool('get_order_details', { order_id });
// Ivan's order's address (A) and another (B).
const ADDRESS_A = {
  address1: '477 Park Avenue',
  address2: 'Suite 558',
  city: 'Dallas',
  state: 'TX',
  country: 'USA',
  zip: '75277',
};
const ADDRESS_B = { ...ADDRESS_A, address1: '12 Oak Street', address2: 'Apt #4B', zip: '75201' };
const moveTo = (address: typeof ADDRESS_A) =>
  tool('modify_pending_order_address', { order_id: IVAN.order, ...address });

function retailInput(overrides: Partial<AgentInput> = {}): Partial<AgentInput> {
  return {
    goal: 'Serve the retail customer.',
    domain: 'retail',
    principal: undefined,
    allow: retailTools.map((t) => t.name),
    conversation: {},
    budget: { max_steps: 20, max_tool_calls: 15, max_seconds: 300 },
    ...overrides,
  };
}

/** The customer answers once the run waits for them after the agent's `agentMessages`-th turn. */
async function customerSays(handle: WorkflowHandle<typeof reactAgent>, agentMessages: number, text: string) {
  await eventually(`the agent's turn ${agentMessages} to await the customer`, async () => {
    const state = await runState(handle);
    const c = state.conversation;
    return state.phase === 'awaiting_customer' && c?.agent_messages === agentMessages && c.unanswered === 0
      ? true
      : undefined;
  });
  await sayToRun(fixture.client, handle.workflowId, { text });
}

/** How many times the run scheduled each tool's activity (a repeat schedules none). */
async function toolActivities(handle: WorkflowHandle<typeof reactAgent>, name: string): Promise<number> {
  const scheduled = scheduledActivityTypes((await handle.fetchHistory()).events ?? []);
  return scheduled.filter((type) => type === name).length;
}

const repeats = (result: AgentResult) => result.trace.filter((t) => t.repeat_of !== undefined).map((t) => t.step);

describe('a natural conversation never trips loop detection', () => {
  it('clarification, a corrected id, a re-read on request, a double-check before the write, a read after it: success', async () => {
    const { handle, id } = await fixture.start(
      byStep({
        1: tool('find_user_id_by_email', { email: IVAN.email }),
        2: lookUp(WRONG_ORDER),
        3: message(`I could not find order ${WRONG_ORDER} on your account. Could you check the id?`),
        // The customer corrected the id: the look-up of the right one.
        4: lookUp(IVAN.order),
        5: message(`Order ${IVAN.order} is pending. Shall I cancel it?`),
        // Asked to check again: the same read after the customer's message is an ordinary call.
        6: lookUp(IVAN.order),
        // The double-check before the write, nothing new in between: answered from step 6.
        7: lookUp(IVAN.order),
        8: tool('cancel_pending_order', CANCEL),
        // After the write the order changed: an ordinary call again.
        9: lookUp(IVAN.order),
        10: final(`Order ${IVAN.order} is cancelled.`),
      }),
      retailInput(),
    );
    await customerSays(handle, 1, `Sorry, a typo: it is ${IVAN.order}`);
    await customerSays(handle, 2, 'Please check it is still pending first, then cancel it.');
    await eventually('the consent question', async () =>
      (await runState(handle)).conversation?.last_message?.consent ? true : undefined,
    );
    await sayToRun(fixture.client, id, { text: 'yes' });
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(repeats(result), [7]);
    assert.equal(await toolActivities(handle, 'get_order_details'), 4, 'the repeat at step 7 ran no activity');
    assert.equal((await readRetailDb(RETAIL_DB, id)).orders[IVAN.order]!.status, 'cancelled');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 1);
    const step7 = result.history.find((h) => h.step === 7)!;
    assert.equal(step7.observation.repeat?.of_step, 6);
    assert.deepEqual(step7.observation.data, result.history.find((h) => h.step === 6)!.observation.data);
    const read9 = result.history.find((h) => h.step === 9)!.observation.data as { status: string };
    assert.equal(read9.status, 'cancelled', 'the read after the write is a new reading');
    // The model was told, in the decision after the repeat.
    const told = JSON.stringify(fixture.llm.requests(id)[7]!.body);
    assert.match(told, /already made this exact call at step 6/);
  });

  it('a read repeated forever with nothing new: the earlier result twice, then loop_detected', async () => {
    const { handle } = await fixture.start(
      byStep({ 1: tool('find_user_id_by_email', { email: IVAN.email }) }, lookUp(IVAN.order)),
      retailInput(),
    );
    const result = await runResult(handle);
    assert.deepEqual([result.status, result.stop_reason], ['stopped', 'loop_detected']);
    assert.deepEqual(repeats(result), [3, 4], 'max_repeats defaults to 2');
    assert.equal(result.trace.at(-1)!.step, 5);
    assert.equal(result.trace.at(-1)!.stop_reason, 'loop_detected');
    assert.equal(await toolActivities(handle, 'get_order_details'), 1);
  });

  it('budget.max_repeats 0: the first repeat ends the run', async () => {
    const { result } = await fixture.run(
      byStep({ 1: tool('find_user_id_by_email', { email: IVAN.email }) }, lookUp(IVAN.order)),
      retailInput({ budget: { max_steps: 20, max_tool_calls: 15, max_seconds: 300, max_repeats: 0 } }),
    );
    assert.equal(result.stop_reason, 'loop_detected');
    assert.equal(result.trace.at(-1)!.step, 3);
  });

  it('"Yes, cancel it." is no consent; the model proposes the same write, the customer is asked again, a yes makes it once', async () => {
    const { handle, id } = await fixture.start(
      byStep({
        1: tool('find_user_id_by_email', { email: IVAN.email }),
        2: tool('cancel_pending_order', CANCEL),
        3: tool('cancel_pending_order', CANCEL),
        4: final(`Order ${IVAN.order} is cancelled.`),
      }),
      retailInput(),
    );
    const consentAsked = (n: number) =>
      eventually(`consent question ${n}`, async () => {
        const state = await runState(handle);
        const c = state.conversation;
        const asked = (c?.turns ?? []).filter((t) => t.consent !== undefined).length;
        return state.phase === 'awaiting_customer' && asked === n && c?.last_message?.consent ? true : undefined;
      });
    await consentAsked(1);
    await sayToRun(fixture.client, id, { text: 'Yes, cancel it.' });
    await consentAsked(2);
    assert.equal((await readRetailDb(RETAIL_DB, id)).orders[IVAN.order]!.status, 'pending');
    await sayToRun(fixture.client, id, { text: 'yes' });
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.trace.find((t) => t.step === 2)?.consent, 'declined');
    assert.equal((await readRetailDb(RETAIL_DB, id)).orders[IVAN.order]!.status, 'cancelled');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 1);
    assert.deepEqual(
      result.effects?.map((e) => [e.tool, e.state]),
      [['cancel_pending_order', 'confirmed']],
    );
  });

  it('an address changed A → B → A → B, each asked for in a new customer message and consented: three writes, success', async () => {
    const { handle, id } = await fixture.start(
      byStep({
        1: tool('find_user_id_by_email', { email: IVAN.email }),
        2: moveTo(ADDRESS_B),
        3: message('Done: the order ships to 12 Oak Street.'),
        // The customer changed their mind: the write made before is made again on their request.
        4: moveTo(ADDRESS_A),
        5: message('Done: back to 477 Park Avenue.'),
        6: moveTo(ADDRESS_B),
        7: final('Your order ships to 12 Oak Street.'),
      }),
      retailInput(),
    );
    // Agent turns: the question (1), done (2), the question (3), done (4), the question (5).
    await customerSays(handle, 1, 'yes');
    await customerSays(handle, 2, 'Actually, please change it back to 477 Park Avenue.');
    await customerSays(handle, 3, 'yes');
    await customerSays(handle, 4, 'Sorry, 12 Oak Street after all.');
    await customerSays(handle, 5, 'yes');
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 3);
    assert.equal((await readRetailDb(RETAIL_DB, id)).orders[IVAN.order]!.address.address1, '12 Oak Street');
    assert.deepEqual(
      result.effects?.map((e) => [e.tool, e.state]),
      [1, 2, 3].map(() => ['modify_pending_order_address', 'confirmed']),
    );
  });

  it('the same write again with only the consenting yes in between: loop_detected, made once', async () => {
    const { handle, id } = await fixture.start(
      byStep({ 1: tool('find_user_id_by_email', { email: IVAN.email }) }, moveTo(ADDRESS_B)),
      retailInput(),
    );
    await customerSays(handle, 1, 'yes');
    const result = await runResult(handle);
    assert.deepEqual([result.status, result.stop_reason], ['stopped', 'loop_detected']);
    assert.equal(result.trace.at(-1)!.step, 3);
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 1);
  });
});
