// What the replay agent does for a task: the ground-truth actions in order, as tool calls through the
// real runtime. Two adjustments, both of which leave the end state unchanged:
// - the runtime acts for the user an authentication returned, so when the actions do not begin with
//   one, the customer is first found by the email the database holds for the user whose orders (or
//   user id) the actions touch, as the customer would give it;
// - a call identical to an earlier one (same tool, same validated arguments) is left out: the
//   runtime's loop detection, which remembers every call of the run, would stop the run on it. A
//   repeated read changes nothing; a repeated write finds its work done (the unit test checks, on
//   every task, that the plan still reaches the expected state).
// Pure.
import type { RetailDB } from '../../domains/retail/db';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { retailToolsByName } from '../../domains/retail/tools/index';
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
  const seen = new Set<string>();
  for (const call of wanted) {
    const signature = callSignature(call.name, call.args);
    if (seen.has(signature)) {
      skipped.push(call.action_id ?? call.name);
      continue;
    }
    seen.add(signature);
    calls.push(call);
  }
  return { calls, ...(authenticates !== undefined ? { authenticates } : {}), skipped };
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
