// `agent list`: recent reactAgent runs, newest first, from Temporal's visibility store, filtered
// by the Agent* search attributes (status, stop reason) and age (cli/run-listing.ts); with
// --waiting, the operator's inbox (cli/inbox.ts).
import { WORKFLOW_TYPE } from '../../client/run-id';
import { usageText } from '../cli-args';
import { defineCommand, line, printJson } from '../cli-context';
import { formatTable, formatTime } from '../format';
import {
  effectsCell,
  FILTER_FLAGS,
  filterFromFlags,
  listRuns,
  listRunsByChainAge,
  MAX_SCAN,
  queryFor,
  rowJson,
  undecodableNote,
} from '../run-listing';
import type { ChainRow, RunRow } from '../run-listing';
import { printInbox, WAITING_FLAG, waitingKinds } from '../inbox';

export const DEFAULT_LIST_LIMIT = 20;

const spec = {
  positionals: [],
  flags: {
    limit: { kind: 'int', help: `how many runs to show (default ${DEFAULT_LIST_LIMIT})` },
    ...FILTER_FLAGS,
    waiting: WAITING_FLAG,
    query: {
      kind: 'boolean',
      help: "print the visibility query (paste it into the Web UI) instead of running it; its StartTime is the current run's, not the chain's",
    },
  },
} as const;

export const list = defineCommand({
  spec,
  usage: usageText(
    'agent list [--status S,..] [--stop-reason R,..] [--older-than 10m] [--waiting [KIND,..]] [--limit N] [--query] [-o text|json|jsonl]\n' +
      "(-o json: an array of {workflow_id, run_id, status (Temporal's), start_time, close_time, agent_status, stop_reason,\n" +
      ' step, tool_calls, principal, effects, undecodable (why its memo could not be read, when so)}, with --older-than also chain_start_time, chain_start_exact, with --waiting also\n' +
      ' waiting, next (the command to type); -o jsonl: one per line)',
    spec,
  ),
  async run(args, ctx) {
    const hint = 'see `agent help list`';
    const limit = args.flags.limit ?? DEFAULT_LIST_LIMIT;
    const waiting = args.flags.waiting === undefined ? undefined : waitingKinds(args.flags.waiting, hint);
    const filter = { ...filterFromFlags(args.flags, hint), ...(waiting ? { waiting } : {}) };
    const query = queryFor(filter, hint);
    if (args.flags.query) {
      if (ctx.output === 'text') line(ctx.io.stdout, query);
      else printJson(ctx, { query });
      return 0;
    }
    const client = await ctx.client();
    // The age of a run is its chain's: the server filters the rest, the client the age.
    const cutoff = filter.startedBefore;
    const serverQuery = cutoff ? queryFor({ ...filter, startedBefore: undefined }, hint) : query;
    const byAge = cutoff ? await listRunsByChainAge(client, serverQuery, cutoff, limit, ctx.env.namespace) : undefined;
    const rows: Array<RunRow | ChainRow> = byAge ? byAge.rows : await listRuns(client, query, limit, ctx.env.namespace);
    const filtered = query !== `WorkflowType = '${WORKFLOW_TYPE}'`;
    // After the rows: how many could not be decoded and why (on stderr when stdout is JSON).
    const note = undecodableNote(rows);
    const printNote = () => note && line(ctx.output === 'text' ? ctx.io.stdout : ctx.io.stderr, note);
    if (waiting) {
      printInbox(ctx, rows, serverQuery);
      if (ctx.output === 'text' && byAge?.truncated)
        line(ctx.io.stdout, `(looked at the newest ${MAX_SCAN} runs only: narrow the filter to see older ones)`);
      printNote();
      return 0;
    }

    if (ctx.output === 'json') {
      printJson(ctx, rows.map(rowJson));
      printNote();
      return 0;
    }
    if (ctx.output === 'jsonl') {
      for (const row of rows) printJson(ctx, rowJson(row));
      printNote();
      return 0;
    }
    if (rows.length === 0 && filtered) {
      line(
        ctx.io.stdout,
        `no ${WORKFLOW_TYPE} runs match (${serverQuery}${cutoff ? `, chain started before ${formatTime(cutoff)}` : ''})`,
      );
      return 0;
    }
    if (rows.length === 0) {
      line(
        ctx.io.stdout,
        `no ${WORKFLOW_TYPE} runs in namespace "${ctx.env.namespace}" yet; start one with \`agent run "<goal>"\``,
      );
      return 0;
    }
    const table = runTable(rows, byAge !== undefined);
    for (const text of table) line(ctx.io.stdout, text);
    if (byAge?.truncated)
      line(ctx.io.stdout, `(looked at the newest ${MAX_SCAN} runs only: narrow the filter to see older ones)`);
    printNote();
    return 0;
  },
});

/** The listing's table: one line per run, the chain's start with --older-than. */
function runTable(rows: ReadonlyArray<RunRow | ChainRow>, byChainAge: boolean): string[] {
  return formatTable(
    [
      'WORKFLOW ID',
      'TEMPORAL',
      'AGENT',
      'STOP REASON',
      'STEP',
      'TOOLS',
      'PRINCIPAL',
      'EFFECTS',
      ...(byChainAge ? ['CHAIN STARTED'] : []),
      'STARTED',
      'CLOSED',
    ],
    rows.map((r) => [
      r.workflow_id,
      r.status,
      r.agent_status ?? '-',
      r.stop_reason ?? '-',
      r.step === null ? '-' : String(r.step),
      r.tool_calls === null ? '-' : String(r.tool_calls),
      r.principal ?? '-',
      effectsCell(r),
      ...('chain_start' in r ? [formatTime(r.chain_start.at) + (r.chain_start.exact ? '' : ' or earlier')] : []),
      formatTime(r.start_time),
      formatTime(r.close_time),
    ]),
  );
}
