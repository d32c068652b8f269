// `agent list --waiting`: the operator's inbox. The runs waiting for a person (the AgentWaiting
// search attribute the workflow keeps current), each with the command that answers it, then the
// visibility query used and the Web UI's run list filtered by it.
import { UsageError } from './cli-args';
import { line, printJson } from './cli-context';
import type { CommandContext } from './cli-context';
import { formatTable, formatTime } from './format';
import { rowJson } from './run-listing';
import type { ChainRow, RunRow } from './run-listing';
import { nextCommand, parseWaitingKinds, WAIT_KINDS } from '../common/temporal/waiting';
import type { WaitKind } from '../common/temporal/waiting';
import { listUrl } from '../runtime/temporal-env';

export const WAITING_FLAG = {
  kind: 'optional',
  value: '[KIND,..]',
  help: `only runs waiting for a person, with the command to type next: ${WAIT_KINDS.join(', ')} (alone: any but none)`,
} as const;

/** `--waiting`'s value as kinds; an unknown one is a usage error in one line that lists the kinds. */
export function waitingKinds(raw: string, hint: string): WaitKind[] {
  const parsed = parseWaitingKinds(raw);
  if (!parsed.ok) throw new UsageError(parsed.error, hint);
  return parsed.kinds;
}

/** The row's kind, if it is one (a run started before AgentWaiting was registered has none). */
function kindOf(row: RunRow): WaitKind | undefined {
  return WAIT_KINDS.find((k) => k === row.waiting);
}

/** What to type next for this run: `-` when it waits for nobody. */
export function nextOf(row: RunRow): string {
  const kind = kindOf(row);
  return kind ? nextCommand(kind, row.workflow_id) : '-';
}

/** Prints the inbox: rows (or JSON with `waiting` and `next`), the query, the Web UI link. */
export function printInbox(ctx: CommandContext, rows: ReadonlyArray<RunRow | ChainRow>, query: string): void {
  if (ctx.output !== 'text') {
    const docs = rows.map((row) => ({ ...rowJson(row), waiting: row.waiting, next: nextOf(row) }));
    if (ctx.output === 'json') printJson(ctx, docs);
    else for (const doc of docs) printJson(ctx, doc);
    return;
  }
  if (rows.length === 0) line(ctx.io.stdout, 'no run matches');
  else {
    const table = formatTable(
      ['WORKFLOW ID', 'WAITING', 'NEXT', 'STEP', 'PRINCIPAL', 'STARTED'],
      rows.map((r) => [
        r.workflow_id,
        r.waiting ?? '-',
        nextOf(r),
        r.step === null ? '-' : String(r.step),
        r.principal ?? '-',
        formatTime(r.start_time),
      ]),
    );
    for (const text of table) line(ctx.io.stdout, text);
  }
  line(ctx.io.stdout, `query: ${query}`);
  line(ctx.io.stdout, `Web UI: ${listUrl(ctx.env, query)}`);
}
