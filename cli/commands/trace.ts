// `agent trace ID`: the run's step events, rebuilt from its workflow history alone
// (client/history/trace.ts), so a finished run can be audited with no worker running and no UI.
// -o jsonl prints one event per line in the step event contract, snake_case; the text form is for reading.
import { usageText } from '../cli-args';
import { defineCommand, line, printJson } from '../cli-context';
import { formatTable, formatUsd } from '../format';
import { rebuildTrace } from '../../client/history/trace';
import type { RebuiltTrace, StepCost, StepEvent } from '../../client/history/trace';
import { fetchRunChain, payloadDecoder } from '../../client/history/fetch-chain';
import { runUrl } from '../../runtime/temporal-env';
import { snakeCaseKeys } from '../output';
import { terminalSafeJson } from '../terminal-text';

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: {
    'run-id': {
      kind: 'string',
      value: 'RUN_ID',
      help: 'trace this run of the workflow id (default: the latest, with the runs it continued from)',
    },
  },
} as const;

export const trace = defineCommand({
  spec,
  usage: usageText(
    'agent trace ID [--run-id RUN_ID] [-o text|json|jsonl]\n' +
      '(-o jsonl: one step event per line, {step, decision, decision_summary, tool, argument_digest, policy_decision,\n' +
      ' approval, validator, unsupported_claims, observation, remaining_budget, stop_reason}; -o json: {outcome, events, costs?})',
    spec,
  ),
  async run(args, ctx) {
    const workflowId = args.positionals[0]!;
    const client = await ctx.client();
    const chain = await fetchRunChain(client, workflowId, args.flags['run-id']);
    const rebuilt = await rebuildTrace(workflowId, chain, payloadDecoder(client));
    if (ctx.deprecatedOutputFlag === 'jsonl') {
      // The deprecated --jsonl keeps the keys it always had (camelCase) until it goes.
      for (const event of rebuilt.events) line(ctx.io.stdout, terminalSafeJson(event));
      return 0;
    }
    if (ctx.output === 'jsonl') {
      for (const event of rebuilt.events) printJson(ctx, snakeCaseKeys(event));
      return 0;
    }
    if (ctx.output === 'json') {
      printJson(
        ctx,
        snakeCaseKeys({
          outcome: rebuilt.outcome,
          events: rebuilt.events,
          ...(rebuilt.costs.length > 0 ? { costs: rebuilt.costs } : {}),
        }),
      );
      return 0;
    }
    for (const text of formatTrace(rebuilt)) line(ctx.io.stdout, text);
    line(ctx.io.stdout, `Web UI: ${runUrl(ctx.env, workflowId)}`);
    return 0;
  },
});

export function formatTrace({ events, outcome, costs }: RebuiltTrace): string[] {
  const costOf = new Map((costs ?? []).map((c) => [c.step, c]));
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
        decisionText(e.decision, costOf.get(e.step)),
        e.tool ?? e.decisionSummary,
        e.argumentDigest ? `${e.argumentDigest.slice(0, 19)}…` : '-',
        [e.policyDecision, e.approval && `person: ${e.approval}`].filter(Boolean).join(', ') || '-',
        observationText(e),
        budgetText(e, costOf.get(e.step)?.costUsd),
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

/** The decision, with what shaped what the model read: a wind-down, results compacted for the context budget. */
function decisionText(decision: string, cost: StepCost | undefined): string {
  const notes = [
    cost?.windDown && `wind-down: ${cost.windDown}`,
    cost?.compacted && `${cost.compacted.results} results compacted`,
  ].filter(Boolean);
  return notes.length > 0 ? `${decision} (${notes.join('; ')})` : decision;
}

function observationText(e: StepEvent): string {
  const o = e.observation;
  if (!o) return '-';
  const parts: string[] = [o.status];
  if (o.source) parts.push(o.source);
  if (o.bytes !== undefined) parts.push(`${o.bytes} B${o.truncated ? ' (truncated)' : ''}`);
  return parts.join(' ');
}

function budgetText(e: StepEvent, costUsd: number | undefined): string {
  const b = e.remainingBudget;
  const tokens = b.tokens === null ? '' : `, ${b.tokens} tokens`;
  const cost = costUsd !== undefined ? `; step cost ${formatUsd(costUsd)}` : '';
  return `${b.steps} steps, ${b.toolCalls} tool calls, ${(b.wallTimeMs / 1000).toFixed(1)} s${tokens}${cost}`;
}
