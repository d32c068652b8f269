// Records the workflow histories that test/durability/replay.test.ts replays, so a change to workflow code
// that alters the command sequence of a recorded run fails the suite. One set, recorded by the
// current code (test/fixtures/histories/<scenario>.json); re-record it when the workflow changes
// on purpose (a new Worker Deployment Version):
//   TEMPORAL_ADDRESS=127.0.0.1:7233 node dist/scripts/record-histories.js [SCENARIO ...]
// With scenario names, only those are (re-)recorded; the others stay as they are.
// HISTORY_SUFFIX=.x writes <scenario>.x.json instead: a second set beside the first, for a change
// guarded by patched() (workflows/agent/patches.ts) whose old path must keep replaying.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { NativeConnection } from '@temporalio/worker';
import { cancelRun, runResult, startRun } from '../client/agent-client';
import { answerApproval, pendingApproval } from '../client/approvals';
import type { ApprovalRequest } from '../client/approvals';
import { RefundService } from '../domains/support/backend/refunds/service';
import { temporalEnv } from '../runtime/temporal-env';
import { SEED_DATA } from '../domains/support/seed-data';
import { defaultAllowedToolsOf } from '../domains/index';
import { supportDomain } from '../domains/support/index';
import { createAgentWorker } from '../worker/create-worker';
import { agentDataConverter } from '../runtime/data-converter';
import { ScriptedLlmServer } from '../offline-model/scripted-llm-server';
import type { Reply } from '../offline-model/scripted-llm-server';
import { final, message, noMessage, serverErrorWithUsage, tool } from '../offline-model/scripted-replies';
import { extendRun } from '../client/extend-run';
import { sayToRun } from '../client/conversation';
import type { SayRequest } from '../common/conversation/conversation';
import { runState } from '../client/agent-client';
import type { AgentInput } from '../common/types';
import type { ExtendRequest } from '../common/cost/extend';
import { LlmLimiter } from '../activities/limiter/llm-lease';
import { RetailStore } from '../domains/retail/backend/store';
import { retailTools } from '../domains/retail/tools/index';
import { LIMITER_WORKFLOW_TYPE, limiterWorkflowId } from '../common/limiter/llm-limiter';
import type { LimiterInput } from '../common/limiter/llm-limiter';

const OUT = path.resolve(__dirname, '..', '..', 'test', 'fixtures', 'histories');

interface Scenario {
  name: string;
  replies: Reply[];
  budget?: Record<string, number>;
  cancelAfterKey?: string;
  allow?: string[];
  /** Answers for the calls that wait for a person, in order. */
  answers?: ApprovalRequest[];
  /** Cancel once the refund is planned, while its first attempt stalls before committing. */
  cancelDuringEffect?: boolean;
  /** More input (topup_wait_seconds, llm_max_attempts). */
  input?: Partial<AgentInput>;
  /** A top-up sent once the run waits for one. */
  extend?: ExtendRequest;
  /** With cancelAfterKey: wait this long after that request before cancelling. */
  cancelDelayMs?: number;
  /** A conversation: the customer's messages, each sent once the run waits for the customer. */
  says?: SayRequest[];
  /** Record the chain's first run (it ends in a continue-as-new), not its last. */
  firstRun?: boolean;
}

const REFUND_ALLOW = [...defaultAllowedToolsOf(supportDomain), 'issue_refund'];
const refund = tool('issue_refund', {
  user_id: 42,
  amount_usd: 49,
  reason: 'pro_monthly paid 10 days ago, within the 14-day window',
});

const SCENARIOS: Scenario[] = [
  {
    name: 'refund-success',
    replies: [
      tool('get_user_profile', { user_id: 42 }),
      { status: 429, headers: { 'retry-after': '1' } },
      tool('get_user_billing', { user_id: 42 }),
      tool('search_policy', { query: 'refund policy' }),
      { action: { kind: 'final', answer: 'Yes: USD 49.00 within the 14-day window.' } },
    ],
  },
  {
    name: 'loop-detected',
    // The same read four times with nothing new: two repeats answered from the first, then loop_detected.
    replies: Array.from({ length: 4 }, () => tool('search_policy', { query: 'refund' })),
  },
  {
    name: 'max-seconds',
    replies: [tool('get_user_profile', { user_id: 42 }), { hang: true }],
    budget: { max_seconds: 2 },
  },
  {
    name: 'cancelled',
    replies: [tool('get_user_profile', { user_id: 42 }), { hang: true }],
    cancelAfterKey: 'decide:2',
  },
  // Effects, approvals, escalation and the principal gate.
  {
    name: 'refund-approved',
    allow: REFUND_ALLOW,
    replies: [
      tool('get_user_billing', { user_id: 42 }),
      refund,
      { action: { kind: 'final', answer: 'Refunded USD 49.00.' } },
    ],
    answers: [{ decision: 'approve' }],
  },
  {
    name: 'refund-rejected-escalated',
    allow: REFUND_ALLOW,
    replies: [
      tool('get_user_billing', { user_id: 42 }),
      refund,
      { action: { kind: 'escalate', reason: 'The refund was rejected; the user insists.' } },
      { action: { kind: 'final', answer: 'A person will follow up.' } },
    ],
    answers: [
      { decision: 'reject', reason: 'refunded by phone already' },
      { decision: 'answer', text: 'Tell them we will call back.' },
    ],
  },
  { name: 'policy-denied', allow: REFUND_ALLOW, replies: [tool('get_user_billing', { user_id: 7 })] },
  // A cancel while the effect is in flight; the run reconciles the refund by key before it ends.
  {
    name: 'refund-cut-off',
    allow: REFUND_ALLOW,
    replies: [tool('get_user_billing', { user_id: 42 }), refund],
    answers: [{ decision: 'approve' }],
    cancelDuringEffect: true,
  },
  // Every attempt charged (a 5xx and an answer without a message, both reporting usage),
  // a dollar budget's wind-down, a top-up that resumes a run waiting for it.
  {
    name: 'retry-charged',
    replies: [
      serverErrorWithUsage({ prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 }),
      noMessage({ prompt_tokens: 30, completion_tokens: 5 }),
      tool('get_user_profile', { user_id: 42 }),
      { action: { kind: 'final', answer: 'User 42 is on pro_monthly.' } },
    ],
  },
  {
    name: 'usd-wind-down',
    budget: { max_usd: 3 },
    replies: [{ action: { kind: 'final', answer: 'What I know: nothing yet; ask billing.' } }],
  },
  {
    name: 'topup-extended',
    budget: { max_steps: 1 },
    input: { topup_wait_seconds: 60 },
    replies: [
      tool('get_user_profile', { user_id: 42 }),
      { action: { kind: 'final', answer: 'User 42 is on pro_monthly.' } },
    ],
    extend: { steps: 2, reason: 'recording a top-up', operator: 'record-histories' },
  },
  // The final validator bounces an answer whose figures no observation holds, once; the
  // next answer is supported. With a decision_summary on the tool call.
  {
    name: 'validator-bounce',
    allow: REFUND_ALLOW,
    replies: [
      {
        action: {
          kind: 'tool',
          name: 'get_user_billing',
          args: { user_id: 42 },
          decision_summary: 'Read the billing record',
        },
      },
      { action: { kind: 'final', answer: 'Yes: USD 59.00 on the Enterprise plan.' } },
      { action: { kind: 'final', answer: 'Yes: USD 49.00 on the pro_monthly plan.' } },
    ],
  },
  // Money and limits: a paid attempt's charge survives a cancel that lands while the retry waits
  // out a Retry-After (the attempt reports itself by Signal); a retry that cannot fit what is left
  // is not sent.
  {
    name: 'retry-cancelled-in-backoff',
    budget: { max_usd: 50 },
    replies: [
      {
        ...serverErrorWithUsage({ prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 }),
        headers: { 'retry-after': '30' },
      },
      { action: { kind: 'final', answer: 'never asked' } },
    ],
    cancelAfterKey: 'decide:1',
    cancelDelayMs: 2_000,
  },
  {
    name: 'retry-budget-exhausted',
    budget: { max_usd: 2.2 },
    replies: [
      noMessage({ prompt_tokens: 30, completion_tokens: 512 }),
      { action: { kind: 'final', answer: 'never asked' } },
    ],
  },
  {
    // A conversation's first run: two turns, a tool, then a continue-as-new that carries the transcript.
    name: 'conversation',
    replies: [
      message('Hello! How can I help?'),
      tool('get_user_profile', { user_id: 42 }),
      message('I found your profile. Anything else?'),
      final('Glad I could help. Goodbye!'),
    ],
    input: { conversation: { idle_timeout_seconds: 600 }, continue_as_new_every: 2 },
    says: [{ text: 'What plan am I on?' }, { text: 'No, thanks.' }],
    firstRun: true,
  },
  {
    // A retail conversation: authentication, a write the customer confirms, one they decline, a transfer.
    name: 'retail-consent',
    replies: [
      tool('find_user_id_by_email', { email: 'ivan.santos3158@example.com' }),
      tool('cancel_pending_order', { order_id: '#W8770097', reason: 'no longer needed' }),
      tool('cancel_pending_order', { order_id: '#W5183325', reason: 'ordered by mistake' }),
      tool('transfer_to_human_agents', { summary: 'The customer wants to talk about the second order.' }),
    ],
    input: {
      goal: 'Serve the retail customer.',
      domain: 'retail',
      principal: undefined,
      allow: retailTools.map((t) => t.name),
      conversation: { idle_timeout_seconds: 600 },
    },
    says: [{ text: 'yes' }, { text: 'No, keep that one.' }],
  },
];

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const unknown = only.filter((name) => name !== LIMITER_SCENARIO && !SCENARIOS.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')}`);
  const scenarios = only.length ? SCENARIOS.filter((s) => only.includes(s.name)) : SCENARIOS;
  const withLimiter = only.length === 0 || only.includes(LIMITER_SCENARIO);
  const env = { ...temporalEnv(), taskQueue: `record-${Date.now()}` };
  const refundsDir = await mkdtemp(path.join(tmpdir(), 'record-refunds-'));
  const refunds = RefundService.open(path.join(refundsDir, 'refunds.sqlite'));
  const retail = RetailStore.open(path.join(refundsDir, 'retail.sqlite'));
  // Read by the refund activity on every call: a scenario can make its first attempt stall.
  const refundFaults = { pauseBeforeCommitMs: 0, pauseAfterCommitMs: 0 };
  const llm = await ScriptedLlmServer.start();
  const nativeConnection = await NativeConnection.connect({ address: env.address });
  const worker = await createAgentWorker({
    connection: nativeConnection,
    namespace: env.namespace,
    taskQueue: env.taskQueue,
    deps: {
      llm: {
        apiKey: 'record',
        baseURL: llm.baseUrl,
        model: 'scripted',
        timeoutMs: 30_000,
        price: { input_usd_per_mtok: 1000, output_usd_per_mtok: 2000 },
      },
      data: async () => SEED_DATA,
      refunds: () => refunds,
      retail: () => retail,
      refundFaults,
    },
    // Fixtures are recorded in plain JSON (the replay test has no keys), whatever the shell has set.
    overrides: { dataConverter: agentDataConverter({}) },
  });
  const client = new Client({
    connection: await Connection.connect({ address: env.address }),
    namespace: env.namespace,
  });
  await mkdir(OUT, { recursive: true });
  await worker.runUntil(async () => {
    for (const scenario of scenarios) {
      const id = `history-${scenario.name}-${Date.now()}`;
      refundFaults.pauseBeforeCommitMs = scenario.cancelDuringEffect ? 30_000 : 0;
      llm.script(id, scenario.replies);
      const handle = await startRun(
        client,
        env,
        {
          goal: 'User 42 asked: Can I get a refund now?',
          principal: '42',
          allow: scenario.allow ?? [...defaultAllowedToolsOf(supportDomain)],
          budget: scenario.budget,
          ...scenario.input,
        },
        id,
      );
      if (scenario.cancelAfterKey) {
        await llm.waitFor(
          (r) => r.workflowId === id && (r.idempotencyKey ?? '').endsWith(`:${scenario.cancelAfterKey}`),
          20_000,
        );
        if (scenario.cancelDelayMs) await new Promise((r) => setTimeout(r, scenario.cancelDelayMs));
        await cancelRun(client, id, 'recording a cancelled run');
      }
      for (const answer of scenario.answers ?? []) {
        let pending;
        for (let tries = 0; !pending; tries++) {
          if (tries > 200) throw new Error(`${scenario.name}: nothing awaited approval`);
          pending = await pendingApproval(handle);
          if (!pending) await new Promise((r) => setTimeout(r, 100));
        }
        await answerApproval(client, id, { ...answer, id: pending.id, operator: 'record-histories' });
      }
      if (scenario.extend) {
        for (let tries = 0; !(await runState(handle)).awaiting_topup; tries++) {
          if (tries > 200) throw new Error(`${scenario.name}: the run never waited for a top-up`);
          await new Promise((r) => setTimeout(r, 100));
        }
        await extendRun(client, id, scenario.extend);
      }
      for (const say of scenario.says ?? []) {
        for (let tries = 0; ; tries++) {
          if (tries > 200) throw new Error(`${scenario.name}: the run never waited for the customer`);
          const state = await runState(client.workflow.getHandle(id));
          if (state.phase === 'awaiting_customer' && state.conversation?.unanswered === 0) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        await sayToRun(client, id, say);
      }
      if (scenario.cancelDuringEffect) {
        for (let tries = 0; refunds.listSync({ workflow_id: id }).length === 0; tries++) {
          if (tries > 200) throw new Error(`${scenario.name}: the refund was never planned`);
          await new Promise((r) => setTimeout(r, 100));
        }
        await cancelRun(client, id, 'recording a cancel during an effect');
      }
      const result = await runResult(handle);
      const run = scenario.firstRun ? client.workflow.getHandle(id, handle.firstExecutionRunId) : handle;
      const history = await run.fetchHistory();
      await writeFile(
        path.join(OUT, `${scenario.name}${process.env.HISTORY_SUFFIX ?? ''}.json`),
        historyToJSON(history) + '\n',
      );
      console.log(`${scenario.name}: ${result.stop_reason}, ${history.events?.length ?? 0} events`);
    }
    if (withLimiter) await recordLimiter(client, env.taskQueue);
  });
  await client.connection.close();
  await refunds.close();
  await rm(refundsDir, { recursive: true, force: true });
  await nativeConnection.close();
  await llm.close();
}

const LIMITER_SCENARIO = 'llm-limiter';

/**
 * The LLM rate limiter's first run: grants through the Update (some waiting in it, some queued), a
 * 429 pause, releases, and its continue-as-new (a tiny history budget makes it come early).
 */
async function recordLimiter(client: Client, taskQueue: string): Promise<void> {
  const scope = `record-${Date.now()}`;
  const limits = { tokens_per_minute: 1000, requests_per_minute: 0, max_in_flight: 2, lease_ttl_ms: 60_000 };
  const handle = await client.workflow.start(LIMITER_WORKFLOW_TYPE, {
    workflowId: limiterWorkflowId(scope),
    taskQueue,
    args: [{ scope, limits, continue_as_new_after_events: 60 } satisfies LimiterInput],
  });
  const limiter = new LlmLimiter(client, { scope, limits, taskQueue });
  let refusedOnce = false;
  await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      limiter.run({
        tokens: 200,
        signal: new AbortController().signal,
        call: async () => {
          if (i === 0 && !refusedOnce) {
            refusedOnce = true;
            throw new Error('429');
          }
          await new Promise((r) => setTimeout(r, 50));
          return 120;
        },
        usedTokens: (used) => used,
        rateLimited: (err) => ((err as Error).message === '429' ? 300 : undefined),
      }),
    ),
  );
  const history = await client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory();
  await writeFile(
    path.join(OUT, `${LIMITER_SCENARIO}${process.env.HISTORY_SUFFIX ?? ''}.json`),
    historyToJSON(history) + '\n',
  );
  console.log(`${LIMITER_SCENARIO}: ${history.events?.length ?? 0} events in its first run`);
  await handle.terminate('recorded');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
