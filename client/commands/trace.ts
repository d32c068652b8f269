// `agent trace ID [--jsonl]`: the run's step events, rebuilt from its workflow history alone
// (client/history-trace.ts), so a finished run can be audited with no worker running and no UI.
// --jsonl prints one event per line in the seeds' contract; the text form is for reading.
import { parseArgs, usageText } from '../cli-args';
import type { Command } from '../cli-context';
import { line } from '../cli-context';
import { formatTable } from '../format';
import { rebuildTrace } from '../history-trace';
import type { RebuiltTrace, StepEvent } from '../history-trace';
import { fetchRunChain, payloadDecoder } from '../run-history';
import { runUrl } from '../../runtime/temporal-env';
import { terminalSafeJson } from '../terminal-text';

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: {
    jsonl: {
      kind: 'boolean',
      help: 'one JSON step event per line: {step, decision, decisionSummary, tool, argumentDigest, policyDecision, approval, observation, remainingBudget, stopReason}',
    },
    'run-id': {
      kind: 'string',
      value: 'RUN_ID',
      help: 'trace this run of the workflow id (default: the latest, with the runs it continued from)',
    },
  },
} as const;

export const trace: Command = {
  name: 'trace',
  summary: 'the step events of a run, rebuilt from its history (works after the run ended, without a worker)',
  usage: usageText('agent trace ID [--jsonl] [--run-id RUN_ID]', spec),
  async run(argv, ctx) {
    const args = parseArgs(argv, spec, 'see `agent help trace`');
    if (args.help) {
      line(ctx.io.stdout, trace.usage);
      return 0;
    }
    const workflowId = args.positionals[0]!;
    const client = await ctx.client();
    const chain = await fetchRunChain(client, workflowId, args.flags['run-id']);
    const rebuilt = await rebuildTrace(workflowId, chain, payloadDecoder(client));
    if (args.flags.jsonl) {
      for (const event of rebuilt.events) line(ctx.io.stdout, terminalSafeJson(event));
      return 0;
    }
    for (const text of formatTrace(rebuilt)) line(ctx.io.stdout, text);
    line(ctx.io.stdout, `Web UI: ${runUrl(ctx.env, workflowId)}`);
    return 0;
  },
};

export function formatTrace({ events, outcome }: RebuiltTrace): string[] {
  const runs =
    outcome.runIds.length === 1 ? `run ${outcome.runIds[0]}` : `${outcome.runIds.length} runs (continued as new)`;
  const lines = [
    `trace of ${outcome.workflowId} (${runs}, Temporal status ${outcome.temporalStatus}), from its history:`,
  ];
  if (events.length === 0) lines.push('  no steps');
  else {
    const table = formatTable(
      ['STEP', 'DECISION', 'TOOL / SUMMARY', 'ARGS', 'POLICY', 'OBSERVATION', 'LEFT'],
      events.map((e) => [
        String(e.step),
        e.decision,
        e.tool ?? e.decisionSummary,
        e.argumentDigest ? `${e.argumentDigest.slice(0, 19)}…` : '-',
        [e.policyDecision, e.approval && `person: ${e.approval}`].filter(Boolean).join(', ') || '-',
        observationText(e),
        budgetText(e),
      ]),
    );
    lines.push(...table.map((t) => `  ${t}`));
  }
  if (outcome.temporalStatus === 'RUNNING') lines.push(`still running: ${outcome.steps} step(s) so far`);
  else {
    const stop = outcome.stopReason ? `${outcome.status ?? 'ended'} (${outcome.stopReason})` : outcome.temporalStatus;
    lines.push(
      `ended: ${stop} after ${outcome.steps} step(s), ${outcome.toolCalls} tool call(s), ${outcome.totalTokens} tokens`,
    );
  }
  return lines;
}

function observationText(e: StepEvent): string {
  const o = e.observation;
  if (!o) return '-';
  const parts: string[] = [o.status];
  if (o.source) parts.push(o.source);
  if (o.bytes !== undefined) parts.push(`${o.bytes} B${o.truncated ? ' (truncated)' : ''}`);
  return parts.join(' ');
}

function budgetText(e: StepEvent): string {
  const b = e.remainingBudget;
  const tokens = b.tokens === null ? '' : `, ${b.tokens} tokens`;
  return `${b.steps} steps, ${b.toolCalls} tool calls, ${(b.wallTimeMs / 1000).toFixed(1)} s${tokens}`;
}
