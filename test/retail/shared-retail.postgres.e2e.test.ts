// Three worker processes, one retail store in PostgreSQL (the database deploy/setup-postgres.sh made
// for `npm test -- --server postgres`, as compose makes it): retail conversations, each customer
// authenticated and saying yes to a write, every first write attempt stalled inside the effect
// (before or after its commit, by worker), then every worker SIGKILLed in turn and replaced.
// Retries land on other workers, which find the key in the shared store or apply the write there.
// At the end: exactly one applied write per key and per conversation, and each conversation's
// database equal, by τ²-bench's hash, to the initial one with that one write applied.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkflowHandle } from '@temporalio/client';
import { runResult, runState } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import type { AgentInput } from '../../common/types';
import type { reactAgent } from '../../workflows/agent/agent';
import { withRetailStore } from '../../domains/retail/backend/open';
import type { RetailTarget } from '../../domains/retail/backend/open';
import { getDbHash } from '../../domains/retail/hash';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { retailTools, retailToolsByName } from '../../domains/retail/tools/index';
import { byStep, final, tool } from '../../offline-model/scripted-replies';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { agentFixture } from '../helpers/agent-fixture';
import type { StartedRun } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';
import { postgresLedger } from '../helpers/postgres-ledger';
import type { PostgresLedger } from '../helpers/postgres-ledger';

const STALL_MS = '60000'; // far past the write's heartbeat timeout: a stalled attempt is retried elsewhere
/** One fault per worker, so both sides of the commit are crossed by a retry on another worker. */
const FAULTS: Record<string, string>[] = [
  { AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS: STALL_MS },
  { AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: STALL_MS },
  { AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS: STALL_MS },
];

const NEW_ADDRESS = {
  address1: '1 Shared Store St',
  address2: 'Unit 3',
  city: 'Portland',
  state: 'OR',
  country: 'USA',
  zip: '97201',
};

/** From τ²-bench's retail database: customers with a pending order, and the write each one confirms. */
const CONVERSATIONS = [
  {
    email: 'sofia.rossi2645@example.com',
    write: 'cancel_pending_order',
    args: { order_id: '#W5918442', reason: 'no longer needed' },
  },
  {
    email: 'fatima.anderson1447@example.com',
    write: 'modify_pending_order_address',
    args: { order_id: '#W2974929', ...NEW_ADDRESS },
  },
  {
    email: 'mei.ahmed5231@example.com',
    write: 'cancel_pending_order',
    args: { order_id: '#W2631563', reason: 'ordered by mistake' },
  },
  {
    email: 'ethan.lopez8943@example.com',
    write: 'modify_user_address',
    args: { user_id: 'ethan_lopez_6291', ...NEW_ADDRESS },
  },
] as const;

let ledger: PostgresLedger;
let store: RetailTarget;
const workers: WorkerProcess[] = [];

const fixture = agentFixture({
  queue: 'shared-retail',
  worker: false,
  prepare: async () => {
    ledger = await postgresLedger();
    store = { url: ledger.url };
  },
  setup: async () => {
    for (const faults of FAULTS) workers.push(startWorker(faults));
    await Promise.all(workers.map((w) => w.ready));
  },
});
after(async () => {
  await ledger?.stop();
});

/** A worker on the fixture's queue whose retail store is the shared one (no SQLite file is used). */
function startWorker(extraEnv: Record<string, string> = {}): WorkerProcess {
  return fixture.startWorker({ AGENT_RETAIL_DATABASE_URL: ledger.url, ...extraEnv });
}

function retailInput(): Partial<AgentInput> {
  return {
    goal: 'Serve the retail customer.',
    domain: 'retail',
    principal: undefined,
    allow: retailTools.map((t) => t.name),
    conversation: {},
    budget: { max_steps: 8, max_tool_calls: 6, max_seconds: 300 },
  };
}

/** The initial database with the conversation's one write applied: what the store must hold at the end. */
function expectedHash(conversation: (typeof CONVERSATIONS)[number]): string {
  const db = loadRetailDb();
  retailToolsByName.get(conversation.write)!.handler(db, conversation.args);
  return getDbHash(db);
}

async function awaitingConsent(handle: WorkflowHandle<typeof reactAgent>): Promise<void> {
  await eventually(
    'the run to ask for consent',
    async () => {
      const state = await runState(handle);
      return state.phase === 'awaiting_customer' && state.conversation?.last_message?.consent ? true : undefined;
    },
    120_000,
  );
}

/** The attempt on which the run's activity of this type started last (Temporal records only the last start). */
async function lastAttempt(handle: WorkflowHandle<typeof reactAgent>, type: string): Promise<number | undefined> {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = new Set(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type)
      .map((e) => String(e.eventId)),
  );
  const started = events.filter(
    (e) =>
      e.activityTaskStartedEventAttributes &&
      scheduled.has(String(e.activityTaskStartedEventAttributes.scheduledEventId)),
  );
  return started.at(-1)?.activityTaskStartedEventAttributes?.attempt ?? undefined;
}

describe('one PostgreSQL retail store shared by three worker processes', () => {
  it('writes in flight, every worker SIGKILLed in turn: exactly one applied write per key, the databases as expected', async () => {
    const runs: Array<StartedRun & { conversation: (typeof CONVERSATIONS)[number] }> = [];
    for (const conversation of CONVERSATIONS) {
      const started = await fixture.start(
        byStep({
          1: tool('find_user_id_by_email', { email: conversation.email }),
          2: tool(conversation.write, conversation.args),
          3: final('Done.'),
        }),
        retailInput(),
      );
      runs.push({ ...started, conversation });
    }
    for (const run of runs) {
      await awaitingConsent(run.handle);
      await sayToRun(fixture.client, run.id, { text: 'Yes, please.' });
    }

    // Every write has been tried: each first attempt now stalls in the effect on some worker.
    for (const run of runs) {
      await eventually(
        `${run.id}: its write tried`,
        async () => {
          const pending = (await run.handle.describe()).raw.pendingActivities ?? [];
          const writing = pending.some((a) => a.activityType?.name === run.conversation.write);
          const done = (await runState(run.handle)).effects?.some((e) => e.tool === run.conversation.write);
          return writing || done ? true : undefined;
        },
        120_000,
      );
    }

    // Crashes in between: each worker SIGKILLed with its attempts in flight, a fresh one (no faults) in its place.
    for (let i = 0; i < workers.length; i++) {
      const pid = workers[i]!.proc.pid;
      await workers[i]!.kill();
      workers[i] = startWorker();
      await workers[i]!.ready;
      assert.notEqual(workers[i]!.proc.pid, pid);
    }

    const results = await Promise.all(runs.map((r) => runResult(r.handle)));
    await withRetailStore(store, async (records) => {
      for (const [i, run] of runs.entries()) {
        const result = results[i]!;
        assert.equal(result.stop_reason, 'success', `${run.id}: ${result.stop_reason}`);
        const effects = (result.effects ?? []).filter((e) => e.tool === run.conversation.write);
        assert.deepEqual(
          effects.map((e) => e.state),
          ['confirmed'],
          `${run.id}: one write, confirmed`,
        );
        // Every first attempt stalled (before or after its commit): a later attempt settled the write.
        assert.ok(((await lastAttempt(run.handle, run.conversation.write)) ?? 0) > 1, `${run.id}: retried`);
        const conversation = await records.conversationOf(run.id);
        assert.notEqual(conversation, run.id, `${run.id}: its conversation wrote to the shared store`);
        assert.deepEqual(
          await records.writesOf(conversation),
          [{ key: effects[0]!.idempotency_key, tool: run.conversation.write, state: 'applied' }],
          `${run.id}: exactly one applied write, under the effect's key`,
        );
        assert.equal(
          getDbHash(await records.database(conversation)),
          expectedHash(run.conversation),
          `${run.id}: the database is the initial one with its one write applied`,
        );
      }
    });
  });
});
