// `agent cancel ID`: the kill switch. It acts on the workflow id's current run chain (whatever run
// it has continued as new to), records the reason in the run's history, then waits a grace period
// for the run to end and says how it ended, its effects included. A run that does not end (no
// worker, failing workflow tasks) is diagnosed, and `--terminate` ends it without the workflow.
import {
  endedCancelled,
  endingSummary,
  EXIT_STILL_RUNNING,
  endingJson,
  formatEnding,
  requestCancel,
  runEnding,
  terminateChain,
  waitForEnd,
} from '../cancel-run';
import { UsageError, usageText } from '../cli-args';
import { AgentError } from '../../client/agent-error';
import type { CommandContext } from '../cli-context';
import { defineCommand, line, printJson, progressOut } from '../cli-context';
import { formatDuration, parseDuration } from '../duration';
import { effectCountsOf, formatEffectCounts } from '../format-effects';
import { describeChain } from '../../client/run-chain';
import { diagnose, stuckFacts } from '../stuck-diagnosis';
import { EFFECTS_MEMO } from '../../common/types';

const DEFAULT_REASON = 'cancelled by operator';
const DEFAULT_TERMINATE_REASON = 'terminated by operator (agent cancel --terminate)';
export const DEFAULT_WAIT = '20s';
const HINT = 'see `agent help cancel`';

const spec = {
  positionals: [{ name: 'ID', required: false, help: 'workflow id of the run (or --stuck)' }],
  flags: {
    reason: { kind: 'string', help: `why, recorded in the run's history (default "${DEFAULT_REASON}")` },
    wait: {
      kind: 'string',
      value: 'DURATION',
      help: `how long to wait for the run(s) to end before saying why not (default ${DEFAULT_WAIT})`,
    },
    'no-wait': { kind: 'boolean', help: 'return once the cancel is recorded' },
    terminate: {
      kind: 'boolean',
      help: 'end the run now, without the workflow (for a run a cancel cannot end); effects in flight are not reconciled',
    },
    stuck: {
      kind: 'boolean',
      help: 'cancel every running run whose chain started longer ago than --older-than (a batch)',
    },
    'older-than': {
      kind: 'string',
      value: 'DURATION',
      help: "with --stuck: 90s, 10m, 1h30m, 2d, compared with the start of the run's continue-as-new chain",
    },
    'dry-run': { kind: 'boolean', help: 'with --stuck: list and count the runs, cancel nothing' },
    yes: { kind: 'boolean', help: 'with --stuck: do not ask for confirmation (required when stdin is not a terminal)' },
    'include-waiting': {
      kind: 'boolean',
      help: 'with --stuck: cancel runs waiting for a person too (an approval, the customer, a top-up); left alone by default',
    },
  },
} as const;

/** --wait / --no-wait as milliseconds to wait (0: do not wait). */
export function waitMsOf(flags: { wait?: string; 'no-wait'?: boolean }): number {
  if (flags['no-wait']) {
    if (flags.wait !== undefined) throw new UsageError('give --wait or --no-wait, not both', HINT);
    return 0;
  }
  try {
    return parseDuration(flags.wait ?? DEFAULT_WAIT);
  } catch (err) {
    throw new UsageError(`--wait: ${(err as Error).message}`, HINT);
  }
}

export const cancel = defineCommand({
  spec,
  usage: usageText(
    'agent cancel ID [--reason TEXT] [--wait DURATION | --no-wait]\n' +
      '       agent cancel ID --terminate [--reason TEXT]\n' +
      '       agent cancel --stuck --older-than 10m [--include-waiting] [--reason TEXT] [--dry-run] [--yes] [--wait DURATION | --no-wait]\n' +
      `exit codes: 0 the run ended cancelled (or the cancel is recorded, with --no-wait; terminated, with --terminate);\n` +
      `            1 no such run, it had already ended, or it ended otherwise; 2 bad input; ${EXIT_STILL_RUNNING} still running after --wait\n` +
      '-o json: {workflow_id, run_id, reason, action, ending, still_running, diagnosis?} (--stuck: {runs, skipped_waiting, ...}; -o jsonl: one run per line)',
    spec,
  ),
  async run(args, ctx) {
    const { flags } = args;
    if (flags.stuck) {
      if (args.positionals.length > 0) throw new UsageError('give either a run ID or --stuck, not both', HINT);
      if (flags.terminate)
        throw new UsageError('--terminate ends one run at a time: agent cancel ID --terminate', HINT);
      // Loaded only for a batch: `cancel ID` is timed from the moment it is typed.
      const { cancelStuck } = await import('./cancel-stuck');
      return cancelStuck({ ...flags, waitMs: waitMsOf(flags) }, ctx);
    }
    const batchOnly = (['older-than', 'dry-run', 'yes', 'include-waiting'] as const).find(
      (f) => flags[f] !== undefined,
    );
    if (batchOnly) throw new UsageError(`--${batchOnly} goes with --stuck`, HINT);
    const workflowId = args.positionals[0];
    if (workflowId === undefined) throw new UsageError('missing ID (or --stuck --older-than DURATION)', HINT);
    if (flags.terminate) {
      if (flags.wait !== undefined || flags['no-wait'])
        throw new UsageError('--terminate does not wait: the run ends at once', HINT);
      return terminate(workflowId, flags.reason ?? DEFAULT_TERMINATE_REASON, ctx);
    }
    return cancelOne(workflowId, flags.reason ?? DEFAULT_REASON, waitMsOf(flags), ctx);
  },
});

async function cancelOne(workflowId: string, reason: string, waitMs: number, ctx: CommandContext): Promise<number> {
  const out = progressOut(ctx);
  const client = await ctx.client();
  const chain = await describeChain(client, workflowId);
  if (chain.description.status.name !== 'RUNNING' || (await requestCancel(client, chain, reason)) === 'ended') {
    throw new AgentError(
      `run ${workflowId} already ended: ${endingSummary(await runEnding(client, workflowId))}; nothing to cancel`,
    );
  }
  const doc = { workflow_id: workflowId, run_id: chain.runId, reason, action: 'cancel_requested' as const };
  line(out, `cancel requested for ${workflowId} (run ${chain.runId}; reason: ${reason})`);
  if (waitMs === 0) {
    line(out, `  not waiting (--no-wait); see how it ends with: agent result ${workflowId}`);
    if (ctx.output !== 'text') printJson(ctx, { ...doc, ending: null, still_running: null });
    return 0;
  }
  line(out, `  waiting up to ${formatDuration(waitMs)} for it to end ...`);
  const ending = await waitForEnd(client, chain, waitMs);
  if (!ending) {
    const why = diagnose(await stuckFacts(client, workflowId));
    if (ctx.output !== 'text') printJson(ctx, { ...doc, ending: null, still_running: true, diagnosis: why });
    throw new AgentError(
      `${workflowId} is still running ${formatDuration(waitMs)} after the cancel: ${why}; end it with \`agent cancel ${workflowId} --terminate\``,
      EXIT_STILL_RUNNING,
    );
  }
  for (const text of formatEnding(ending)) line(out, text);
  if (ctx.output !== 'text') printJson(ctx, { ...doc, ending: endingJson(ending), still_running: false });
  if (!endedCancelled(ending))
    throw new AgentError(`${workflowId} ended ${endingSummary(ending)} before the cancel took effect`);
  return 0;
}

async function terminate(workflowId: string, reason: string, ctx: CommandContext): Promise<number> {
  const out = progressOut(ctx);
  const client = await ctx.client();
  const chain = await describeChain(client, workflowId);
  if (chain.description.status.name !== 'RUNNING' || (await terminateChain(client, chain, reason)) === 'ended') {
    throw new AgentError(
      `run ${workflowId} already ended: ${endingSummary(await runEnding(client, workflowId))}; nothing to terminate`,
    );
  }
  const counts = effectCountsOf(chain.description.memo?.[EFFECTS_MEMO]);
  if (ctx.output !== 'text')
    printJson(ctx, {
      workflow_id: workflowId,
      run_id: chain.runId,
      reason,
      action: 'terminated',
      effect_counts: counts ?? null,
    });
  line(out, `terminated ${workflowId} (run ${chain.runId}; reason: ${reason}, recorded in its history)`);
  line(out, `  effects recorded before: ${counts ? formatEffectCounts(counts) : 'none'}`);
  line(
    out,
    '  a terminated run does not reconcile effects in flight: a refund it had started may or may not have been made.',
  );
  line(out, `  Check the refunds service by idempotency key (this run's keys start with "${workflowId}:").`);
  return 0;
}
