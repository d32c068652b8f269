// `agent cancel ID`: the kill switch. Temporal records the request (with the reason) in the run's
// history; the workflow aborts the step in flight and ends Canceled, keeping its partial result.
import type { Client } from '@temporalio/client';
import { cancelRun, existingRun, RunNotFoundError } from '../agent-client';
import { parseArgs, UsageError, usageText } from '../cli-args';
import type { Command } from '../cli-context';
import { CliError, line } from '../cli-context';
import { cancelStuck } from './cancel-stuck';

const DEFAULT_REASON = 'cancelled by operator';

const spec = {
  positionals: [{ name: 'ID', required: false, help: 'workflow id of the run (or --stuck)' }],
  flags: {
    reason: { kind: 'string', help: `why, recorded in the run's history (default "${DEFAULT_REASON}")` },
    stuck: { kind: 'boolean', help: 'cancel every run still running that started longer ago than --older-than (a batch)' },
    'older-than': { kind: 'string', value: 'DURATION', help: 'with --stuck: 90s, 10m, 1h30m, 2d' },
    'dry-run': { kind: 'boolean', help: 'with --stuck: list and count the runs, cancel nothing' },
    yes: { kind: 'boolean', help: 'with --stuck: do not ask for confirmation (required when stdin is not a terminal)' },
  },
} as const;

async function ensureRunning(client: Client, workflowId: string): Promise<void> {
  const handle = await existingRun(client, workflowId);
  const description = await handle.describe();
  if (description.status.name !== 'RUNNING') {
    throw new CliError(`run "${workflowId}" already ended (${description.status.name}); nothing to cancel`);
  }
}

export const cancel: Command = {
  name: 'cancel',
  summary: 'cancel a running run (the kill switch)',
  usage: usageText('agent cancel ID [--reason TEXT]\n       agent cancel --stuck --older-than 10m [--reason TEXT] [--dry-run] [--yes]', spec),
  async run(argv, ctx) {
    const args = parseArgs(argv, spec, 'see `agent help cancel`');
    if (args.help) {
      line(ctx.io.stdout, cancel.usage);
      return 0;
    }
    if (args.flags.stuck) {
      if (args.positionals.length > 0) throw new UsageError('give either a run ID or --stuck, not both', 'see `agent help cancel`');
      return cancelStuck(args.flags, ctx);
    }
    const batchOnly = (['older-than', 'dry-run', 'yes'] as const).find((f) => args.flags[f] !== undefined);
    if (batchOnly) throw new UsageError(`--${batchOnly} goes with --stuck`, 'see `agent help cancel`');
    const workflowId = args.positionals[0];
    if (workflowId === undefined) throw new UsageError('missing ID (or --stuck --older-than DURATION)', 'see `agent help cancel`');
    const reason = args.flags.reason ?? DEFAULT_REASON;
    const client = await ctx.client();
    await ensureRunning(client, workflowId);
    try {
      await cancelRun(client, workflowId, reason);
    } catch (err) {
      // It existed a moment ago: it has just ended (Temporal answers NOT_FOUND for closed runs).
      if (err instanceof RunNotFoundError) await ensureRunning(client, workflowId);
      throw err;
    }
    line(ctx.io.stdout, `cancel requested for ${workflowId} (reason: ${reason})`);
    line(ctx.io.stdout, `  the run stops its current step and ends as cancelled; see it with: npm run agent -- result ${workflowId}`);
    return 0;
  },
};
