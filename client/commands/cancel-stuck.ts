// `agent cancel --stuck --older-than 10m`: the kill switch for every run that has been running
// longer than that. It lists the matching runs (a visibility query with a fixed cutoff), shows
// the count, asks for confirmation unless --yes, then cancels exactly the runs it counted: each
// by workflow id AND run id, with the reason recorded in that run's history. A run that ended in
// the meantime is reported, not an error; a run that started after the count is never touched.
//
// Why not Temporal's StartBatchOperation: it does not put the reason into each run's history (the
// audit trail an operator reads later), runs asynchronously, and servers allow one batch at a
// time per namespace by default. The client-side batch below keeps 8 requests in flight.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { UsageError } from '../cli-args';
import type { CommandContext } from '../cli-context';
import { CliError, line } from '../cli-context';
import { canConfirm, confirm } from '../confirm';
import type { Stdin } from '../confirm';
import { formatDuration, parseDuration } from '../duration';
import { formatTable, formatTime } from '../format';
import { listRuns, queryFor } from '../run-listing';
import type { RunRow } from '../run-listing';

const HINT = 'see `agent help cancel`';
const IN_FLIGHT = 8;
/** More than this many matches is almost certainly a wrong filter: refuse. */
export const MAX_BATCH = 10_000;
const SHOWN = 20;

export interface StuckFlags {
  'older-than'?: string;
  reason?: string;
  'dry-run'?: boolean;
  yes?: boolean;
}

export type CancelOutcome = 'cancel_requested' | 'already_ended' | 'failed';

export async function cancelStuck(flags: StuckFlags, ctx: CommandContext, stdin: Stdin = process.stdin): Promise<number> {
  if (flags['older-than'] === undefined) throw new UsageError('--stuck needs --older-than (e.g. --older-than 10m)', HINT);
  let olderThanMs: number;
  try {
    olderThanMs = parseDuration(flags['older-than']);
  } catch (err) {
    throw new UsageError(`--older-than: ${(err as Error).message}`, HINT);
  }
  const cutoff = new Date(Date.now() - olderThanMs);
  const query = queryFor({ openOnly: true, startedBefore: cutoff }, HINT);
  const reason = flags.reason ?? `stuck: running longer than ${formatDuration(olderThanMs)} (agent cancel --stuck)`;
  const out = ctx.io.stdout;

  const client = await ctx.client();
  const runs = await listRuns(client, query, MAX_BATCH + 1, ctx.env.namespace);
  if (runs.length > MAX_BATCH) throw new CliError(`more than ${MAX_BATCH} runs match (${query}); narrow the filter`);
  if (runs.length === 0) {
    line(out, `no running agent runs started more than ${formatDuration(olderThanMs)} ago (before ${formatTime(cutoff)}); nothing to cancel`);
    return 0;
  }

  line(out, `${runs.length} running agent run(s) started more than ${formatDuration(olderThanMs)} ago (before ${formatTime(cutoff)}):`);
  const table = formatTable(
    ['WORKFLOW ID', 'RUN ID', 'STEP', 'PRINCIPAL', 'STARTED'],
    runs.slice(0, SHOWN).map((r) => [r.workflow_id, r.run_id, r.step === null ? '-' : String(r.step), r.principal ?? '-', formatTime(r.start_time)]),
  );
  for (const text of table) line(out, `  ${text}`);
  if (runs.length > SHOWN) line(out, `  ... and ${runs.length - SHOWN} more`);

  if (flags['dry-run']) {
    line(out, `dry run: would cancel ${runs.length} run(s) with reason "${reason}"; nothing was cancelled`);
    return 0;
  }
  if (!flags.yes) {
    if (!canConfirm(stdin)) {
      throw new CliError(
        `refusing to cancel ${runs.length} run(s) without confirmation: stdin is not a terminal; re-run with --yes to confirm (or --dry-run to only list them)`,
      );
    }
    const ok = await confirm(`cancel these ${runs.length} run(s)? [y/N] `, stdin, out);
    if (!ok) {
      line(out, 'not confirmed; nothing was cancelled');
      return 1;
    }
  }

  const outcomes = await cancelEach(client, runs, reason);
  const counts = { cancel_requested: 0, already_ended: 0, failed: 0 };
  for (const { row, outcome, error } of outcomes) {
    counts[outcome]++;
    const what = outcome === 'cancel_requested' ? 'cancel requested' : outcome === 'already_ended' ? 'already ended' : `FAILED: ${error}`;
    line(out, `  ${row.workflow_id} (${row.run_id}): ${what}`);
  }
  line(
    out,
    `cancel requested for ${counts.cancel_requested} of ${runs.length} run(s)` +
      (counts.already_ended ? `, ${counts.already_ended} had already ended` : '') +
      (counts.failed ? `, ${counts.failed} FAILED` : '') +
      ` (reason: ${reason})`,
  );
  return counts.failed > 0 ? 1 : 0;
}

async function cancelEach(client: Client, rows: RunRow[], reason: string): Promise<Array<{ row: RunRow; outcome: CancelOutcome; error?: string }>> {
  const results: Array<{ row: RunRow; outcome: CancelOutcome; error?: string }> = new Array(rows.length);
  let next = 0;
  const worker = async () => {
    while (next < rows.length) {
      const index = next++;
      const row = rows[index]!;
      try {
        await client.workflowService.requestCancelWorkflowExecution({
          namespace: client.options.namespace,
          workflowExecution: { workflowId: row.workflow_id, runId: row.run_id },
          reason,
          identity: client.options.identity,
          requestId: randomUUID(),
        });
        results[index] = { row, outcome: 'cancel_requested' };
      } catch (err) {
        // NOT_FOUND: that run has closed since it was listed (Temporal's answer for closed runs).
        if ((err as { code?: number }).code === 5) results[index] = { row, outcome: 'already_ended' };
        else results[index] = { row, outcome: 'failed', error: ((err as Error).message ?? String(err)).split('\n')[0] };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, rows.length) }, worker));
  return results;
}
