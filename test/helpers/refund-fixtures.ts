// Fixtures for refund tests: a support-data file with many paying users (so each test refunds its
// own user and the refunds service's per-user rule never couples tests), a fresh refunds ledger
// per test file on the suite's backend (fixture-ledger.ts: SQLite, or PostgreSQL in the PostgreSQL
// profile), and scripted model replies for the refund path.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { SEED_DATA } from '../../domains/support/seed-data';
import type { SupportData } from '../../domains/support/seed-data';
import type { RefundFilter, RefundStore } from '../../domains/support/backend/refunds/rules';
import type { RefundRecord } from '../../domains/support/refund-ledger';
import { fixtureLedger } from './fixture-ledger';
import type { LedgerKind } from './fixture-ledger';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { final } from '../../offline-model/scripted-replies';
import { defaultAllowedToolsOf } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';
import type { ApprovalDecision, PendingApproval } from '../../common/conversation/approvals';
import type { AgentInput, TraceEntry } from '../../common/types';
import type { StopReason } from '../../common/stop-reasons';

/** Pro-monthly users who paid USD 49.00 ten days ago: 1001 ... 1099. */
export const PAYING_USERS = Array.from({ length: 99 }, (_, i) => 1001 + i);
/** A pro-monthly user whose first payment was 30 days ago (outside the 14-day window). */
export const LATE_USER = 2001;

export const REFUND_ALLOW = [...defaultAllowedToolsOf(supportDomain), 'issue_refund'];

export interface RefundFixture {
  dir: string;
  dataFile: string;
  /** Where the ledger lives: SQLite on the dev server, PostgreSQL in the PostgreSQL profile. */
  ledger: LedgerKind;
  /** The SQLite ledger's file (undefined on PostgreSQL: use rows()). */
  dbFile: string | undefined;
  /** Env for a worker process that uses this fixture: its data file and its ledger. */
  workerEnv: Record<string, string>;
  /** The ledger's rows, as an operator reads them, from whichever backend the workers write to. */
  rows(filter?: RefundFilter): Promise<RefundRecord[]>;
  /** The ledger's store (a connection of the test's own), for what rows() does not cover. */
  store(): RefundStore;
  nextUser(): number;
  /** Adds a pro-monthly user who paid USD 49.00 that many days ago (the tools read the file on every call). */
  addPayingUser(id: number, name: string, daysSinceFirstPayment: number): void;
  cleanup(): Promise<void>;
}

function addPayingUser(data: SupportData, id: number, name: string, daysSinceFirstPayment: number): void {
  data.users[String(id)] = { id, name, country: 'US', tier: 'pro' };
  data.billing[String(id)] = {
    currency: 'USD',
    plan: 'pro_monthly',
    price_usd: 49,
    days_since_first_payment: daysSinceFirstPayment,
  };
}

/**
 * `label` names the ledger's PostgreSQL schema (for reading it after a failed run); `ledgerUrl`
 * puts the ledger in another PostgreSQL than the profile's (a test file's own server).
 */
export async function refundFixture(opts: { label?: string; ledgerUrl?: string } = {}): Promise<RefundFixture> {
  const dir = mkdtempSync(path.join(tmpdir(), 'refund-test-'));
  const data: SupportData = structuredClone(SEED_DATA);
  for (const id of PAYING_USERS) addPayingUser(data, id, `User ${id}`, 10);
  addPayingUser(data, LATE_USER, 'Late', 30);
  const dataFile = path.join(dir, 'support-data.json');
  writeFileSync(dataFile, JSON.stringify(data));
  const ledger = await fixtureLedger(dir, opts.label ?? 'refunds', opts.ledgerUrl);
  let next = 0;
  return {
    dir,
    dataFile,
    ledger: ledger.kind,
    dbFile: ledger.dbFile,
    workerEnv: { AGENT_DATA_FILE: dataFile, ...ledger.workerEnv },
    rows: (filter = {}) => ledger.store().list(filter),
    store: () => ledger.store(),
    nextUser: () => PAYING_USERS[next++]!,
    addPayingUser: (id, name, days) => {
      addPayingUser(data, id, name, days);
      writeFileSync(dataFile, JSON.stringify(data));
    },
    cleanup: async () => {
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// The refund path's replies, under the names the refund tests use.
export { tool, billing as billingOf, refund as refundOf } from '../../offline-model/scripted-replies';
export const finalAnswer = (answer = 'Refunded USD 49.00.'): Reply => final(answer);

export function refundGoal(userId: number): string {
  return `User ${userId} asked: Can I get a refund now? Check billing and policy; refund if allowed.`;
}

/** A refund run's input for `userId`: its goal, its principal, the refund tool allowed. */
export function refundInput(userId: number, overrides: Partial<AgentInput> = {}): Partial<AgentInput> {
  return { goal: refundGoal(userId), principal: String(userId), allow: REFUND_ALLOW, ...overrides };
}

/** `agent run` arguments for a refund run of `userId` (what an operator types). */
export function refundRunArgs(userId: number, id: string, maxSeconds: number): string[] {
  return [
    'run',
    refundGoal(userId),
    '--user-id',
    String(userId),
    '--allow',
    REFUND_ALLOW.join(','),
    '--id',
    id,
    '--max-seconds',
    String(maxSeconds),
  ];
}

/** The trace entry of a refund asked for at step 2 (after billing) that did not happen. */
export function refusedRefundStep(
  pending: PendingApproval,
  stopReason: StopReason,
  approval?: ApprovalDecision,
): Omit<TraceEntry, 'args_hash'> & { args_hash: string | undefined } {
  return {
    step: 2,
    tool: 'issue_refund',
    args_hash: pending.args_hash,
    ok: false,
    stop_reason: stopReason,
    ...(approval ? { approval } : {}),
  };
}
