// The τ² suite's chaos hits writes inside as well: each chaos run gets a scenario file (the eval
// world's, eval/world.ts) whose commit fault stalls the first attempt of every retail write, without
// heartbeats, longer than the heartbeat timeout: before the commit (the retry makes it) or after it
// (the retry finds the key and reports the first outcome), drawn from the seed per run. The process
// faults released by the customer's yes then land while that attempt is stalled.
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { retailTools } from '../../domains/retail/tools/index';
import { SEED_DATA } from '../../domains/support/seed-data';
import type { SupportData } from '../../domains/support/seed-data';
import { evalRunFileName } from '../faults';
import type { EvalRunFile, ToolFault } from '../faults';

export type CommitFault = 'timeout_before_commit' | 'timeout_after_commit';

/** Longer than the tool heartbeat timeout (2 s): the stalled attempt is given up and retried. */
const STALL_MS = 3000;

export function writeCommitFaults(dir: string, workflowId: string, random: () => number): CommitFault {
  const kind: CommitFault = random() < 0.5 ? 'timeout_before_commit' : 'timeout_after_commit';
  const faults: ToolFault[] = retailTools
    .filter((t) => t.kind === 'write')
    .map((t) => ({ tool: t.name, kind, ms: STALL_MS }));
  const file: EvalRunFile<SupportData> = { data: SEED_DATA, faults };
  writeFileSync(path.join(dir, evalRunFileName(workflowId, 'json')), JSON.stringify(file));
  return kind;
}
