// What an evaluation reports: report.json (every figure, every trial, the run's metadata), the
// terminal's table, and the pass/fail verdict (the non-negotiables, and in offline mode every
// trial's expectations).
import type { ChaosEvent } from './harness/chaos';
import { CHECKS } from './checks';
import type { Comparison } from './harness/compare';
import { computeMetrics, METRIC_NAMES } from './metrics';
import type { Metrics, Rate } from './metrics';
import { isScripted } from './harness/run-metadata';
import type { RunMetadata } from './harness/run-metadata';
import type { TrialResult } from './run-one';
import { formatRate } from './harness/standard-error';
import type { PhaseName } from './harness/phases';
import type { SuiteResult } from './suite';
import { formatTotalCost, rateEntry, rowId, totalCost, trajectoryOf, trialCost } from './harness/trial-table';
import type { CostTotal, RateEntry, TrialRow } from './harness/trial-table';
import { trialUrl } from './harness/web-ui-links';
import { alignedColumns, phasesIn, trialLineStart } from './harness/terminal-table';

export interface TrialReport {
  phase: PhaseName;
  scenario: string;
  slice: string;
  trial: number;
  workflow_id: string;
  passed: boolean;
  unsafe: boolean;
  cancelled_by_chaos: boolean;
  stop_reason: string | null;
  answer: string | null;
  steps: number;
  latency_ms: number | null;
  tokens: number;
  /** Every tool activity of the run as its history records it: the attempt that reported, how it ended. */
  calls: Array<{ step: number; tool: string; attempts: number; outcome: string }>;
  failed_checks: Array<{ name: string; meaning: string; detail?: string }>;
}

export interface PhaseReport {
  wall_ms: number;
  metrics: Metrics;
  slices: Record<string, { runs: number; task_success: Rate; unsafe: number; pass_hat_k: Record<string, number> }>;
  chaos_events: ChaosEvent[];
}

export interface Report {
  suite: 'scenarios';
  generated_at: string;
  metadata: RunMetadata;
  mode: {
    live: boolean;
    chaos: boolean;
    chaos_once: boolean;
    k: number;
    seed: number;
    scenarios: number;
    workers: number;
  };
  phases: Partial<Record<PhaseName, PhaseReport>>;
  non_negotiables: { ok: boolean; problems: string[] };
  /** Offline: every trial met its expectations. */
  all_passed: boolean;
  /** The eval's verdict: the exit code is 0 only when this is true. */
  ok: boolean;
  /** Every rate of every phase, with its standard error (what --compare reads). */
  rates: RateEntry[];
  cost: CostTotal;
  /** Every trial: outcome, cost, latency, answer and trajectory (the HTML's table). */
  trial_table: TrialRow[];
  /** Details of every trial: its checks and tool calls. */
  trials: TrialReport[];
  /** --compare: what changed since the previous report. */
  comparison?: Comparison;
}

/** The rates of a phase's metrics, and which way is better. */
const RATE_DIRECTIONS: ReadonlyArray<[keyof Metrics, RateEntry['better']]> = [
  ['task_success', 'higher'],
  ['supported_answer_rate', 'higher'],
  ['tool_selection_accuracy', 'higher'],
  ['invalid_argument_rate', 'lower'],
  ['unnecessary_tool_rate', 'lower'],
  ['repeated_action_rate', 'lower'],
  ['recovery_after_tool_error', 'higher'],
  ['ambiguous_effect_rate', 'lower'],
  ['human_escalation_precision', 'higher'],
];

export interface ReportMode {
  live: boolean;
  chaos: boolean;
  chaosOnce: boolean;
  k: number;
  seed: number;
  scenarios: number;
  workers: number;
}

export function buildReport(suite: SuiteResult, mode: ReportMode, metadata: RunMetadata): Report {
  const phases: Report['phases'] = {};
  const trials: TrialReport[] = [];
  const table: TrialRow[] = [];
  const rates: RateEntry[] = [];
  const problems: string[] = [];
  for (const p of suite.phases) {
    const metrics = computeMetrics(p.trials);
    const bySlice = new Map<string, typeof p.trials>();
    for (const t of p.trials) bySlice.set(t.slice, [...(bySlice.get(t.slice) ?? []), t]);
    const slices: PhaseReport['slices'] = {};
    for (const [slice, ts] of [...bySlice].sort(([a], [b]) => a.localeCompare(b))) {
      const m = computeMetrics(ts);
      slices[slice] = {
        runs: ts.length,
        task_success: m.task_success,
        unsafe: m.unsafe_success.count,
        pass_hat_k: m.pass_hat_k,
      };
    }
    phases[p.phase] = { wall_ms: p.wallMs, metrics, slices, chaos_events: p.chaos };
    for (const [name, better] of RATE_DIRECTIONS) rates.push(rateEntry(p.phase, name, metrics[name] as Rate, better));
    rates.push(rateEntry(p.phase, 'unsafe_success', { value: metrics.unsafe_success.rate, n: metrics.runs }, 'lower'));
    if (metrics.unsafe_success.count > 0) problems.push(`${p.phase}: unsafe_success = ${metrics.unsafe_success.count}`);
    if (metrics.unknown_stop_reasons > 0)
      problems.push(`${p.phase}: ${metrics.unknown_stop_reasons} runs without a known stop reason`);
    // Offline, the end state is scripted to be right: a mismatch is a duplicate or lost effect.
    if (!mode.live && metrics.end_state_mismatches > 0)
      problems.push(`${p.phase}: ${metrics.end_state_mismatches} runs whose refunds database is not the expected one`);
    for (const t of p.trials) {
      const failed = t.verdict.checks.filter((c) => !c.ok);
      const latency = t.record.closedAtMs !== undefined ? t.record.closedAtMs - t.record.startedAtMs : null;
      table.push(trialRow(p.phase, t, latency, metadata, suite));
      trials.push({
        phase: p.phase,
        scenario: t.scenario,
        slice: t.slice,
        trial: t.trial,
        workflow_id: t.workflowId,
        passed: t.verdict.passed,
        unsafe: t.verdict.unsafe,
        cancelled_by_chaos: t.cancelledOnPurpose,
        stop_reason: t.stopReason ?? null,
        answer: t.answer ?? null,
        steps: t.record.decisions.length,
        latency_ms: latency,
        tokens: t.record.tokens,
        calls: t.record.calls.map((c) => ({ step: c.step, tool: c.tool, attempts: c.attempts, outcome: c.outcome })),
        failed_checks: failed.map((c) => ({
          name: c.name,
          meaning: CHECKS[c.name],
          ...(c.detail ? { detail: c.detail } : {}),
        })),
      });
    }
  }
  const allPassed = trials.every((t) => t.passed);
  return {
    suite: 'scenarios',
    generated_at: metadata.date,
    metadata,
    mode: {
      live: mode.live,
      chaos: mode.chaos,
      chaos_once: mode.chaosOnce,
      k: mode.k,
      seed: mode.seed,
      scenarios: mode.scenarios,
      workers: mode.workers,
    },
    phases,
    non_negotiables: { ok: problems.length === 0, problems },
    all_passed: allPassed,
    // Live: the model may fail tasks (that is what is measured); only the non-negotiables fail the eval.
    ok: problems.length === 0 && (mode.live || allPassed),
    rates,
    cost: totalCost(table, isScripted(metadata)),
    trial_table: table,
    trials,
  };
}

/** The trial's row of the shared table (eval/harness/trial-table.ts). */
function trialRow(
  phase: PhaseName,
  t: TrialResult,
  latency: number | null,
  metadata: RunMetadata,
  suite: SuiteResult,
): TrialRow {
  return {
    id: rowId(phase, t.scenario, t.trial),
    phase,
    scenario: t.scenario,
    trial: t.trial,
    workflow_id: t.workflowId,
    url: trialUrl(metadata.web_ui, suite.env, t.workflowId),
    passed: t.verdict.passed,
    stop_reason: t.stopReason ?? null,
    steps: t.record.decisions.length,
    tokens: t.record.tokens,
    // The scripted model's token counts are made up: no price applies to them.
    cost_usd: isScripted(metadata) ? null : trialCost(t.record.result?.usage, t.stepCosts),
    latency_ms: latency,
    answer: t.answer ?? null,
    problems: t.verdict.checks
      .filter((c) => !c.ok)
      .map((c) => `${c.name}: ${CHECKS[c.name]}${c.detail ? ` — ${c.detail}` : ''}`),
    trajectory: trajectoryOf(t.events),
    transcript: t.transcript,
  };
}

// ---- terminal ------------------------------------------------------------------------------

export function formatMetric(name: keyof Metrics, m: Metrics): string {
  const v = m[name];
  if (v === null || v === undefined) return '-';
  if (typeof v === 'number') return name.includes('latency') ? `${Math.round(v)} ms` : fmt(v);
  if (name === 'unsafe_success') {
    const u = v as Metrics['unsafe_success'];
    return `${u.count}: ${formatRate(u.rate, m.runs)}`;
  }
  if ('n' in (v as Rate)) return formatRate((v as Rate).value, (v as Rate).n);
  return JSON.stringify(v);
}

export function metricsTable(report: Report): string {
  const cols = phasesIn(report.phases);
  const rows: string[][] = [['metric', ...cols]];
  for (const name of METRIC_NAMES) rows.push([name, ...cols.map((c) => formatMetric(name, report.phases[c]!.metrics))]);
  const ks = Object.keys(report.phases.baseline?.metrics.pass_hat_k ?? {});
  for (const k of ks) rows.push([`pass^${k}`, ...cols.map((c) => fmt(report.phases[c]!.metrics.pass_hat_k[k] ?? NaN))]);
  rows.push(['runs', ...cols.map((c) => String(report.phases[c]!.metrics.runs))]);
  rows.push(['wall time', ...cols.map((c) => `${(report.phases[c]!.wall_ms / 1000).toFixed(1)} s`)]);
  const scripted = isScripted(report.metadata);
  rows.push([
    'cost',
    ...cols.map((c) =>
      formatTotalCost(
        totalCost(
          report.trial_table.filter((t) => t.phase === c),
          scripted,
        ),
      ),
    ),
  ]);
  return alignedColumns(rows);
}

export function trialLine(
  phase: string,
  done: number,
  total: number,
  t: TrialReport | { scenario: string; trial: number; passed: boolean; stop_reason: string | null; steps: number },
): string {
  return `${trialLineStart(phase, done, total, t.passed)} ${t.scenario} #${t.trial}: ${t.stop_reason ?? '(no stop reason)'}, ${t.steps} steps`;
}

const fmt = (x: number) => (Number.isNaN(x) ? '-' : Number.isInteger(x) ? String(x) : x.toFixed(2));
