// `agent cancel --stuck --older-than 10m`: the kill switch for every run that has been running
// longer than that, judged by the start of its whole continue-as-new chain (a chain that
// continued as new a minute ago may have run for hours). It lists the running agent runs, finds
// each chain's start (client/run-chain.ts) against a cutoff computed once, shows the count, asks
// for confirmation unless --yes, then cancels exactly the chains it counted: each by workflow id
// and first run id (the chain's current run, never a newer chain that reuses the id), with the
// reason in that run's history. Then it waits (--wait) and reports the runs that did not end.
// A run rightly waiting for a person (an approval, the customer, a top-up; it says so through its
// `state` query) is not stuck: it is listed as skipped and left alone unless --include-waiting.
//
// Why not Temporal's StartBatchOperation: it does not put the reason into each run's history (the
// audit trail an operator reads later), runs asynchronously, and servers allow one batch at a
// time per namespace by default. The client-side batch below keeps 8 requests in flight.
import type { Client } from '@temporalio/client';
import {
  endedCancelled,
  endingJson,
  endingSummary,
  EXIT_STILL_RUNNING,
  requestCancel,
  waitForEnd,
} from '../cancel-run';
import type { RunEnding } from '../cancel-run';
import { UsageError } from '../cli-args';
import { AgentError } from '../../client/agent-error';
import type { CommandContext, Writable } from '../cli-context';
import { line, printJson, progressOut } from '../cli-context';
import { mapPool } from '../../client/concurrency';
import { canConfirm, confirm } from '../confirm';
import type { Stdin } from '../confirm';
import { formatDuration, parseDuration } from '../duration';
import { formatTable, formatTime } from '../format';
import { listRuns, queryFor, rowJson, withChainStarts } from '../run-listing';
import type { ChainRow } from '../run-listing';
import { diagnose, stuckFacts } from '../stuck-diagnosis';
import { awaitsPerson } from '../person-wait';

const HINT = 'see `agent help cancel`';
const IN_FLIGHT = 8;
/** More than this many running runs is almost certainly not what an operator meant to scan: refuse. */
export const MAX_BATCH = 10_000;
const SHOWN = 20;

export interface StuckFlags {
  'older-than'?: string;
  reason?: string;
  'dry-run'?: boolean;
  yes?: boolean;
  /** Cancel runs waiting for a person too. */
  'include-waiting'?: boolean;
  /** How long to wait for the cancelled runs to end; 0: do not wait. */
  waitMs: number;
}

export type CancelOutcome = 'cancel_requested' | 'already_ended' | 'failed' | 'skipped_waiting';
interface CancelResult {
  row: ChainRow;
  outcome: CancelOutcome;
  error?: string;
  /** What the run began to wait for (skipped_waiting). */
  awaited?: string;
}

export async function cancelStuck(
  flags: StuckFlags,
  ctx: CommandContext,
  stdin: Stdin = process.stdin,
): Promise<number> {
  const scan = scanOf(flags);
  const includeWaiting = flags['include-waiting'] === true;
  const out = progressOut(ctx);
  const client = await ctx.client();
  const { runs, waiting } = await oldRuns(client, ctx.env.namespace, scan.cutoff, includeWaiting);
  // Runs left alone because they wait for a person: {...row, outcome: "skipped_waiting", waits_for}.
  const skipped = waiting.map((w) => ({ ...rowJson(w.row), outcome: 'skipped_waiting', waits_for: w.awaited }));
  const report = (rows: Array<Record<string, unknown>>) => printReport(ctx, scan, rows, skipped);
  printWaiting(out, waiting);
  const age = `chain started more than ${formatDuration(scan.olderThanMs)} ago (before ${formatTime(scan.cutoff)})`;
  if (runs.length === 0) {
    line(
      out,
      `no running agent runs whose ${age}` +
        `${waiting.length > 0 ? ' but those waiting for a person' : ''}; nothing to cancel`,
    );
    report([]);
    return 0;
  }
  line(out, `${runs.length} running agent run(s) whose ${age}:`);
  printRuns(out, runs);

  if (scan.dryRun) {
    line(out, `dry run: would cancel ${runs.length} run(s) with reason "${scan.reason}"; nothing was cancelled`);
    report(runs.map((row) => ({ ...rowJson(row), outcome: null })));
    return 0;
  }
  if (!flags.yes && !(await confirmed(runs.length, stdin, out))) {
    line(out, 'not confirmed; nothing was cancelled');
    return 1;
  }

  const outcomes = await cancelEach(client, runs, scan.reason, includeWaiting);
  const failed = printOutcomes(out, outcomes, scan.reason);
  const requested = outcomes.filter((o) => o.outcome === 'cancel_requested').map((o) => o.row);
  const endings =
    flags.waitMs > 0 && requested.length > 0 ? await waitForAll(client, requested, flags.waitMs, ctx) : new Map();
  const stillRunning = [...endings.values()].filter((e) => typeof e === 'string').length;
  report(outcomes.map((result) => resultJson(result, endings.get(result.row))));
  if (failed > 0) return 1;
  return stillRunning > 0 ? EXIT_STILL_RUNNING : 0;
}

/** What the flags ask for: runs whose chain started before `cutoff`, cancelled with `reason`. */
interface Scan {
  olderThanMs: number;
  cutoff: Date;
  reason: string;
  dryRun: boolean;
}

function scanOf(flags: StuckFlags): Scan {
  if (flags['older-than'] === undefined)
    throw new UsageError('--stuck needs --older-than (e.g. --older-than 10m)', HINT);
  let olderThanMs: number;
  try {
    olderThanMs = parseDuration(flags['older-than']);
  } catch (err) {
    throw new UsageError(`--older-than: ${(err as Error).message}`, HINT);
  }
  return {
    olderThanMs,
    cutoff: new Date(Date.now() - olderThanMs),
    reason: flags.reason ?? `stuck: running longer than ${formatDuration(olderThanMs)} (agent cancel --stuck)`,
    dryRun: flags['dry-run'] === true,
  };
}

/** -o json: one document {older_than_ms, cutoff, reason, dry_run, runs, skipped_waiting}; -o jsonl: one line per run. */
function printReport(
  ctx: CommandContext,
  scan: Scan,
  runs: Array<Record<string, unknown>>,
  skipped: Array<Record<string, unknown>>,
): void {
  if (ctx.output === 'jsonl') for (const run of [...runs, ...skipped]) printJson(ctx, run);
  else if (ctx.output === 'json')
    printJson(ctx, {
      older_than_ms: scan.olderThanMs,
      cutoff: scan.cutoff.toISOString(),
      reason: scan.reason,
      dry_run: scan.dryRun,
      runs,
      skipped_waiting: skipped,
    });
}

/** The chains running since before `cutoff`: those to cancel, and those that wait for a person. */
async function oldRuns(
  client: Client,
  namespace: string,
  cutoff: Date,
  includeWaiting: boolean,
): Promise<{ runs: ChainRow[]; waiting: Array<{ row: ChainRow; awaited: string }> }> {
  // Every running agent run: a young run may belong to an old chain, so the age is judged below.
  const query = queryFor({ openOnly: true }, HINT);
  const open = await listRuns(client, query, MAX_BATCH + 1, namespace);
  if (open.length > MAX_BATCH)
    throw new AgentError(`more than ${MAX_BATCH} agent runs are running (${query}); cancel them in smaller groups`);
  const old = oneRowPerChain(await withChainStarts(client, open, IN_FLIGHT)).filter((r) => r.chain_start.at < cutoff);
  return includeWaiting ? { runs: old, waiting: [] } : await withoutWaiting(client, old);
}

function printWaiting(out: Writable, waiting: Array<{ row: ChainRow; awaited: string }>): void {
  if (waiting.length === 0) return;
  line(
    out,
    `${waiting.length} old run(s) wait for a person, not stuck; left alone (--include-waiting cancels them too):`,
  );
  for (const w of waiting.slice(0, SHOWN)) line(out, `  ${w.row.workflow_id}: waits for ${w.awaited}`);
  if (waiting.length > SHOWN) line(out, `  ... and ${waiting.length - SHOWN} more`);
}

function printRuns(out: Writable, runs: ChainRow[]): void {
  const table = formatTable(
    ['WORKFLOW ID', 'RUN ID', 'STEP', 'PRINCIPAL', 'CHAIN STARTED', 'RUN STARTED'],
    runs
      .slice(0, SHOWN)
      .map((r) => [
        r.workflow_id,
        r.run_id,
        r.step === null ? '-' : String(r.step),
        r.principal ?? '-',
        chainStartText(r),
        formatTime(r.start_time),
      ]),
  );
  for (const text of table) line(out, `  ${text}`);
  if (runs.length > SHOWN) line(out, `  ... and ${runs.length - SHOWN} more`);
}

/** The operator's yes; without a terminal to ask on, a refusal (--yes confirms up front). */
async function confirmed(count: number, stdin: Stdin, out: Writable): Promise<boolean> {
  if (!canConfirm(stdin)) {
    throw new AgentError(
      `refusing to cancel ${count} run(s) without confirmation: stdin is not a terminal; re-run with --yes to confirm (or --dry-run to only list them)`,
    );
  }
  return confirm(`cancel these ${count} run(s)? [y/N] `, stdin, out);
}

async function cancelEach(
  client: Client,
  runs: ChainRow[],
  reason: string,
  includeWaiting: boolean,
): Promise<CancelResult[]> {
  return mapPool(runs, IN_FLIGHT, async (row): Promise<CancelResult> => {
    try {
      // Asked again just before its cancel: a run may have begun waiting for a person since the
      // list (during the prompt, or other runs' slow queries); what is left is milliseconds.
      const awaited = includeWaiting ? undefined : await awaitsPerson(client, row.chain);
      if (awaited !== undefined) return { row, outcome: 'skipped_waiting', awaited };
      const outcome: CancelOutcome =
        (await requestCancel(client, row.chain, reason)) === 'requested' ? 'cancel_requested' : 'already_ended';
      return { row, outcome };
    } catch (err) {
      return { row, outcome: 'failed' as CancelOutcome, error: ((err as Error).message ?? String(err)).split('\n')[0] };
    }
  });
}

/** Prints each run's outcome and the totals; returns how many failed. */
function printOutcomes(out: Writable, outcomes: CancelResult[], reason: string): number {
  const counts = { cancel_requested: 0, already_ended: 0, failed: 0, skipped_waiting: 0 };
  for (const { row, outcome, error, awaited } of outcomes) {
    counts[outcome]++;
    const what =
      outcome === 'cancel_requested'
        ? 'cancel requested'
        : outcome === 'already_ended'
          ? 'already ended'
          : outcome === 'skipped_waiting'
            ? `left alone: it now waits for ${awaited}`
            : `FAILED: ${error}`;
    line(out, `  ${row.workflow_id} (${row.run_id}): ${what}`);
  }
  line(
    out,
    `cancel requested for ${counts.cancel_requested} of ${outcomes.length} run(s)` +
      (counts.already_ended ? `, ${counts.already_ended} had already ended` : '') +
      (counts.skipped_waiting ? `, ${counts.skipped_waiting} began waiting for a person and were left alone` : '') +
      (counts.failed ? `, ${counts.failed} FAILED` : '') +
      ` (reason: ${reason})`,
  );
  return counts.failed;
}

function resultJson(
  { row, outcome, error, awaited }: CancelResult,
  ending: RunEnding | string | undefined,
): Record<string, unknown> {
  return {
    ...rowJson(row),
    outcome,
    ...(awaited !== undefined ? { waits_for: awaited } : {}),
    error: error ?? null,
    ending: ending === undefined || typeof ending === 'string' ? null : endingJson(ending),
    still_running: ending === undefined ? null : typeof ending === 'string',
    ...(typeof ending === 'string' ? { diagnosis: ending.replace(/^STILL RUNNING: /, '') } : {}),
  };
}

/** Waits for the cancelled runs to end (one shared deadline); prints each; returns each one's ending (or why it still runs). */
async function waitForAll(
  client: Client,
  rows: ChainRow[],
  waitMs: number,
  ctx: CommandContext,
): Promise<Map<ChainRow, RunEnding | string>> {
  const out = progressOut(ctx);
  line(out, `waiting up to ${formatDuration(waitMs)} for them to end ...`);
  const deadline = Date.now() + waitMs;
  const endings = await mapPool(rows, IN_FLIGHT, async (row): Promise<RunEnding | string> => {
    const ending = await waitForEnd(client, row.chain, Math.max(1, deadline - Date.now()));
    return ending ?? `STILL RUNNING: ${diagnose(await stuckFacts(client, row.workflow_id))}`;
  });
  let still = 0;
  for (const [i, ending] of endings.entries()) {
    if (typeof ending === 'string') still++;
    const text =
      typeof ending === 'string'
        ? ending
        : `${endingSummary(ending)}${endedCancelled(ending) ? '' : ' (not by the cancel)'}`;
    line(out, `  ${rows[i]!.workflow_id}: ${text}`);
    if (typeof ending !== 'string' && ending.result?.effects?.some((e) => e.state === 'ambiguous')) {
      line(out, `    AMBIGUOUS effect: money may have moved; see \`agent result ${rows[i]!.workflow_id}\` for its key`);
    }
  }
  const ended = rows.length - still;
  line(
    out,
    `${ended} of ${rows.length} run(s) ended` +
      (still > 0
        ? `; ${still} still running after ${formatDuration(waitMs)}: end each with \`agent cancel ID --terminate\``
        : ''),
  );
  return new Map(rows.map((row, i) => [row, endings[i]!]));
}

/** The runs that do not wait for a person, and those that do (with what they wait for). */
async function withoutWaiting(
  client: Client,
  rows: ChainRow[],
): Promise<{ runs: ChainRow[]; waiting: Array<{ row: ChainRow; awaited: string }> }> {
  const awaited = await mapPool(rows, IN_FLIGHT, (row) => awaitsPerson(client, row.chain));
  return {
    runs: rows.filter((_, i) => awaited[i] === undefined),
    waiting: rows.flatMap((row, i) => (awaited[i] === undefined ? [] : [{ row, awaited: awaited[i]! }])),
  };
}

/**
 * The chains that still run, once each: a listed run that has continued as new since is still its
 * chain (the cancel reaches the newer run), and that newer run may be listed too.
 */
function oneRowPerChain(rows: ChainRow[]): ChainRow[] {
  const seen = new Set<string>();
  return rows.filter((r) => {
    const status = r.chain.description.status.name;
    if (status !== 'RUNNING' && status !== 'CONTINUED_AS_NEW') return false;
    const key = JSON.stringify([r.workflow_id, r.chain.firstRunId]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function chainStartText(r: ChainRow): string {
  return r.chain_start.exact ? formatTime(r.chain_start.at) : `${formatTime(r.chain_start.at)} or earlier`;
}
