// The end state a task expects, as τ²-bench computes it: its ground-truth actions applied in order to
// a fresh copy of the initial database by the tools (here the TypeScript port), every error swallowed
// (a refused call changes what the reference's would: possibly something, as the tool left it), then
// get_db_hash. Pure; nothing here knows a task but through its actions.
import { getDbHash } from '../../domains/retail/hash';
import { loadRetailDb } from '../../domains/retail/initial-db';
import type { RetailDB } from '../../domains/retail/db';
import { retailToolsByName } from '../../domains/retail/tools/index';
import type { GoldAction, Tau2Task } from './task';
import { goldActions } from './task';

export interface ExpectedState {
  db: RetailDB;
  /** τ²'s get_db_hash of `db`. */
  hash: string;
  /** Ground-truth writes that succeeded: the writes a correct run commits (each exactly once). */
  writes: number;
}

/** Runs one ground-truth action on `db`: whether the tool succeeded, and whether it is a write. */
export function applyGoldAction(db: RetailDB, action: GoldAction): { ok: boolean; write: boolean } {
  const tool = retailToolsByName.get(action.name);
  if (!tool) return { ok: false, write: false };
  const write = tool.kind === 'write';
  const args = tool.args.safeParse(action.arguments);
  if (!args.success) return { ok: false, write };
  try {
    tool.handler(db, args.data);
    return { ok: true, write };
  } catch {
    return { ok: false, write };
  }
}

/** `hash`: get_db_hash, or a faster equal one (db-hash.ts). */
export function expectedState(task: Tau2Task, hash: (db: RetailDB) => string = getDbHash): ExpectedState {
  const db = loadRetailDb();
  let writes = 0;
  for (const action of goldActions(task)) {
    const { ok, write } = applyGoldAction(db, action);
    if (ok && write) writes++;
  }
  return { db, hash: hash(db), writes };
}
