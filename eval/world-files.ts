// Writes what one evaluated run's tools will see (read by eval/world.ts in the eval worker):
// `<dir>/<workflow id>.json` with the scenario's data and faults, and the refunds database
// `<dir>/<workflow id>.sqlite` seeded with the scenario's starting rows.
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { RefundService } from '../domains/support/backend/refunds/service';
import { SEED_DATA } from '../domains/support/seed-data';
import type { SupportData } from '../domains/support/seed-data';
import { evalRunFileName } from './faults';
import type { EvalRunFile } from './faults';
import type { RefundRow } from './checks';
import type { Scenario } from './scenario';

/** The built-in support data with the scenario's users and billing records added or replaced, and its policies if given. */
export function scenarioData(s: Pick<Scenario, 'data'>): SupportData {
  const data = structuredClone(SEED_DATA);
  Object.assign(data.users, s.data?.users ?? {});
  Object.assign(data.billing, s.data?.billing ?? {});
  if (s.data?.policies) data.policies = s.data.policies;
  return data;
}

export function refundsDbFile(dir: string, workflowId: string): string {
  return path.join(dir, evalRunFileName(workflowId, 'sqlite'));
}

export async function writeRunWorld(
  dir: string,
  workflowId: string,
  s: Pick<Scenario, 'data' | 'faults' | 'refunds'>,
): Promise<void> {
  const file: EvalRunFile<SupportData> = { data: scenarioData(s), faults: s.faults };
  writeFileSync(path.join(dir, evalRunFileName(workflowId, 'json')), JSON.stringify(file));
  const db = RefundService.open(refundsDbFile(dir, workflowId));
  try {
    for (const [i, row] of s.refunds.entries()) {
      const key = `eval-seed-${i}`;
      await db.plan({
        idempotency_key: key,
        workflow_id: 'eval-seed',
        user_id: row.user_id,
        amount_usd: row.amount_usd,
        reason: 'earlier refund',
      });
      // Paid is not the question for a seeded row: it happened before the scenario begins.
      await db.confirm({ idempotency_key: key, fence: 1, paid_usd: 1_000_000 });
    }
  } finally {
    await db.close();
  }
}

/** The run's refunds database at the end, as the checks read it. */
export function readRefundRows(dir: string, workflowId: string): RefundRow[] {
  const db = RefundService.open(refundsDbFile(dir, workflowId));
  try {
    return db
      .listSync()
      .map((r) => ({ user_id: r.user_id, amount_usd: r.amount_usd, state: r.state, workflow_id: r.workflow_id }));
  } finally {
    void db.close(); // SQLite: closed at once
  }
}
