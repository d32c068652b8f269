// `npm run demo -- --refund`: the demo's refund-with-approval act, kept apart from scripts/demo.ts
// (which calls it). The agent gathers the facts, proposes the refund, the run waits for an
// operator, who approves it from a second terminal (`npm run agent -- approve ID`), and the
// refunds service confirms the effect once.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Client, WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { RefundService } from '../domains/support/backend/refunds/service';
import { cancelRun, runResult, startRun } from '../client/agent-client';
import { answerApproval, pendingApproval } from '../client/approvals';
import { defaultWorkflowId } from '../cli/commands/run';
import { followRun } from '../cli/follow-run';
import { formatResult } from '../cli/format';
import { describePending } from '../cli/format-approval';
import { runUrl } from '../runtime/temporal-env';
import type { TemporalEnv } from '../runtime/temporal-env';
import type { reactAgent } from '../workflows/agent/agent';
import type { PendingApproval } from '../common/conversation/approvals';
import type { AgentInput } from '../common/types';
import { defaultAllowedToolsOf } from '../domains/index';
import { supportDomain } from '../domains/support/index';

export const REFUND_DEMO_USER_ID = 42;
export const REFUND_DEMO_GOAL =
  'User 42 asked: I want my money back. Verify profile, billing state and the refund policy; if a refund is due, ' +
  'issue it with issue_refund (an operator approves it), then answer briefly in English with the USD amount.';

/** The flags scripts/demo.ts adds to its own. */
export const REFUND_DEMO_FLAGS = {
  refund: { kind: 'boolean', help: 'show a refund that needs approval: you approve it from a second terminal' },
  'auto-approve': { kind: 'boolean', help: 'with --refund: approve it from the demo itself (unattended runs)' },
} as const;

/** How long the demo's run waits for the operator. */
const APPROVAL_TIMEOUT_SECONDS = 600;

export interface RefundDemoStore {
  file: string;
  refunds: () => RefundService;
  close(): Promise<void>;
}

/**
 * The demo's refunds service: AGENT_REFUNDS_DB if set, otherwise a fresh SQLite file per demo
 * run, so the demo can be repeated (the service refuses a second refund of the same payment).
 */
export function refundDemoStore(env: NodeJS.ProcessEnv = process.env): RefundDemoStore {
  const file =
    env.AGENT_REFUNDS_DB || path.join(mkdtempSync(path.join(tmpdir(), 'agent-demo-refunds-')), 'refunds.sqlite');
  let service: RefundService | undefined;
  return { file, refunds: () => (service ??= RefundService.open(file)), close: async () => service?.close() };
}

export interface RefundDemoOptions {
  say(text?: string): void;
  interrupted: Promise<never>;
  autoApprove: boolean;
  store: RefundDemoStore;
  /** For tests: told when the run waits for approval. */
  onPending?(pending: PendingApproval, workflowId: string): void;
}

/** Starts a demo's run and says where to follow it (its id, its page in the Web UI). */
export async function startDemoRun(
  client: Client,
  env: TemporalEnv,
  workflowId: string,
  say: (text?: string) => void,
  input: AgentInput,
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof reactAgent>> {
  const handle = await startRun(client, env, input, workflowId);
  say(`Run:    ${workflowId}`);
  say(`Web UI: ${runUrl(env, workflowId)}`);
  say();
  return handle;
}

export async function runRefundDemo(client: Client, env: TemporalEnv, opts: RefundDemoOptions): Promise<string> {
  const { say } = opts;
  const workflowId = defaultWorkflowId(String(REFUND_DEMO_USER_ID));
  say();
  say(`Goal (user ${REFUND_DEMO_USER_ID}): ${REFUND_DEMO_GOAL}`);
  say(`Refunds service: SQLite at ${opts.store.file}`);
  const handle = await startDemoRun(client, env, workflowId, say, {
    goal: REFUND_DEMO_GOAL,
    principal: String(REFUND_DEMO_USER_ID),
    allow: [...defaultAllowedToolsOf(supportDomain), 'issue_refund'],
    approval_timeout_seconds: APPROVAL_TIMEOUT_SECONDS,
    // The budget's clock stops while a person decides; this covers the agent's own work.
    budget: { max_seconds: 120 },
  });

  let watching = true;
  try {
    // Ask the operator only once the progress printer has shown the run reaching the approval,
    // so the prompt never appears before the steps that led to it.
    let reachedApproval!: () => void;
    const approvalShown = new Promise<void>((resolve) => (reachedApproval = resolve));
    const follow = followRun(client, handle, {
      onLine: (text) => {
        if (watching) say(`  ${text}`);
        if (text.includes('awaiting approval')) reachedApproval();
      },
    });
    const asked = Promise.race([approvalShown, follow.catch(() => undefined)]).then(() =>
      askOperator(client, env, handle, workflowId, opts, follow),
    );
    const result = await Promise.race([follow, opts.interrupted]);
    await asked;
    say();
    for (const text of formatResult(result)) say(text);
    const rows = opts.store.refunds().listSync({ workflow_id: workflowId });
    say();
    say(
      rows.length === 0
        ? 'Refunds service: no refund was written for this run.'
        : 'Refunds service (the system of record):',
    );
    for (const r of rows) {
      say(
        `  #${r.id} user ${r.user_id} USD ${r.amount_usd.toFixed(2)} ${r.state}${r.rejection ? ` (${r.rejection})` : ''}, idempotency key ${r.idempotency_key}`,
      );
    }
  } catch (err) {
    watching = false;
    // The demo is going away, and its worker with it: do not leave a run behind that waits.
    await cancelRun(
      client,
      workflowId,
      `demo ended: ${err instanceof Error ? err.message : String(err)}`,
      handle.firstExecutionRunId,
    ).catch(() => undefined);
    await client.connection.withDeadline(Date.now() + 5_000, () => runResult(handle)).catch(() => undefined);
    throw err;
  }
  return workflowId;
}

/** Waits until the run asks for approval, then tells the operator how to answer (or answers). */
async function askOperator(
  client: Client,
  env: TemporalEnv,
  handle: WorkflowHandle,
  workflowId: string,
  opts: RefundDemoOptions,
  follow: Promise<unknown>,
): Promise<void> {
  let ended = false;
  void follow.then(
    () => (ended = true),
    () => (ended = true),
  );
  let pending: PendingApproval | undefined;
  while (!ended && !pending) {
    pending = await pendingApproval(handle).catch(() => undefined);
    if (!pending) await new Promise((r) => setTimeout(r, 300));
  }
  if (!pending) return;
  opts.onPending?.(pending, workflowId);
  const { say } = opts;
  // The CLI's defaults are localhost:7233 and namespace default; name anything else.
  const prefix =
    (/^(localhost|127\.0\.0\.1):7233$/.test(env.address) ? '' : `TEMPORAL_ADDRESS=${env.address} `) +
    (env.namespace === 'default' ? '' : `TEMPORAL_NAMESPACE=${env.namespace} `);
  say();
  say(`  The run waits for an operator to approve ${describePending(pending)}.`);
  say('  Nothing has been refunded yet. In a second terminal, run one of:');
  say(`      ${prefix}npm run agent -- approve ${workflowId}`);
  say(`      ${prefix}npm run agent -- reject ${workflowId} --reason "..."`);
  say(
    `  (it waits up to ${APPROVAL_TIMEOUT_SECONDS / 60} minutes; \`npm run agent -- status ${workflowId}\` shows the pending call)`,
  );
  say();
  if (opts.autoApprove) {
    const receipt = await answerApproval(client, workflowId, {
      decision: 'approve',
      id: pending.id,
      operator: 'demo --auto-approve',
    });
    say(`  --auto-approve: approved ${receipt.id}`);
  }
}
