// What the replay agent does for a task: the ground-truth actions in order, as tool calls through the
// real runtime. Two adjustments, both of which leave the end state unchanged:
// - the runtime acts for the user an authentication returned, so when the actions do not begin with
//   one, the customer is first found by the email the database holds for the user whose orders (or
//   user id) the actions touch, as the customer would give it;
// - a call the runtime's loop detection would stop the run on is left out: a read identical to an
//   earlier one with no write applied in between (it would read the same), or a write identical to
//   an earlier write (the unit test checks, on every task, that the plan still reaches the expected
//   state). A read repeated after a write applied is replayed: the runtime reads a changed world.
// Pure.
import type { RetailDB } from '../../domains/retail/db';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { snapshot } from '../../domains/retail/db';
import { RetailToolError } from '../../domains/retail/errors';
import { retailToolsByName } from '../../domains/retail/tools/index';
import type { AnyRetailTool } from '../../domains/retail/tools/index';
import type { Tau2Task } from './task';
import { goldActions } from './task';

export const AUTH_TOOLS: readonly string[] = ['find_user_id_by_email', 'find_user_id_by_name_zip'];

export interface PlannedCall {
  name: string;
  args: Record<string, unknown>;
  /** The ground-truth action it replays; absent for the authentication added before them. */
  action_id?: string;
}

export interface ReplayPlan {
  calls: PlannedCall[];
  /** The user the added authentication finds (absent when none was added). */
  authenticates?: string;
  /** Ground-truth calls left out as repeats (their action ids). */
  skipped: string[];
}

/** The user whose orders or user id the actions touch first, if any. */
export function touchedUser(task: Tau2Task, db: RetailDB): string | undefined {
  for (const { arguments: args } of goldActions(task)) {
    if (typeof args.user_id === 'string' && Object.hasOwn(db.users, args.user_id)) return args.user_id;
    if (typeof args.order_id === 'string' && Object.hasOwn(db.orders, args.order_id))
      return db.orders[args.order_id]!.user_id;
  }
  return undefined;
}

/** A call's identity as the loop detection sees it: the tool and its validated arguments. */
export function callSignature(name: string, args: Record<string, unknown>): string {
  const parsed = retailToolsByName.get(name)?.args.safeParse(args);
  return `${name}:${canonicalJson(parsed?.success ? parsed.data : args)}`;
}

export function planReplay(task: Tau2Task, db: RetailDB = loadRetailDb()): ReplayPlan {
  const gold = goldActions(task);
  const wanted: PlannedCall[] = gold.map((a) => ({ name: a.name, args: a.arguments, action_id: a.action_id }));
  let authenticates: string | undefined;
  if (!AUTH_TOOLS.includes(gold[0]?.name ?? '')) {
    authenticates = touchedUser(task, db);
    if (authenticates !== undefined)
      wanted.unshift({ name: 'find_user_id_by_email', args: { email: db.users[authenticates]!.email } });
  }
  const calls: PlannedCall[] = [];
  const skipped: string[] = [];
  const reads = new Set<string>();
  const writes = new Set<string>();
  // The plan runs the calls on a copy to know which writes apply (a refused one changes no signature).
  const world = snapshot(db);
  for (const call of wanted) {
    const signature = callSignature(call.name, call.args);
    const tool = retailToolsByName.get(call.name);
    const isWrite = tool?.kind === 'write';
    const seen = isWrite ? writes : reads;
    if (seen.has(signature)) {
      skipped.push(call.action_id ?? call.name);
      continue;
    }
    seen.add(signature);
    calls.push(call);
    if (tool && applies(tool, world, call.args) && isWrite) reads.clear();
  }
  return { calls, ...(authenticates !== undefined ? { authenticates } : {}), skipped };
}

/** Runs the call on `db` as the runtime would; whether it succeeded (a refusal is an observation). */
function applies(tool: AnyRetailTool, db: RetailDB, args: Record<string, unknown>): boolean {
  const parsed = tool.args.safeParse(args);
  if (!parsed.success) return false;
  try {
    tool.handler(db, parsed.data);
    return true;
  } catch (err) {
    if (err instanceof RetailToolError) return false;
    throw err;
  }
}

/** JSON with object keys sorted at every level: equal values, equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
