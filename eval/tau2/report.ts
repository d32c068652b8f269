// What the τ² retail suite reports: report.json (per phase the figures, per task and trial the
// database match, steps, cost and writes), the terminal's lines, and the verdict: every trial's end
// state is the expected one (replay; live measures the model, so only duplicate writes fail it), no
// run committed a write beyond the ground truth's, and every run lists the writes it made. The
// metadata, rates, trial table and comparison are the scenario suite's (eval/harness/trial-table.ts).
import type { ChaosEvent } from '../harness/chaos';
import type { Comparison } from '../harness/compare';
import { mean, passHatK, percentile } from '../metrics';
import { isScripted } from '../harness/run-metadata';
import type { RunMetadata } from '../harness/run-metadata';
import { formatRate } from '../harness/standard-error';
import type { PhaseName } from '../harness/phases';
import { formatTotalCost, rateEntry, rowId, totalCost } from '../harness/trial-table';
import type { CostTotal, RateEntry, TrialRow } from '../harness/trial-table';
import { trialUrl } from '../harness/web-ui-links';
import { alignedColumns, phasesIn, trialLineStart } from '../harness/terminal-table';
import type { SuiteMode, TaskTrialResult } from './run-task';
import type { Tau2SuiteResult } from './suite';

/** A trial's details (its trajectory and transcript are in its row of the trial table). */
export interface Tau2TrialReport extends Omit<TaskTrialResult, 'trajectory' | 'transcript'> {
  phase: PhaseName;
}

export interface Tau2TaskReport {
  task_id: string;
  trials: number;
  db_matches: number;
  /** pass^k of this task alone: C(matches, k) / C(trials, k). */
  pass_hat_k: Record<string, number>;
  mean_steps: number | null;
  /** null when some trial's cost is unknown. */
  cost_usd: number | null;
}

export interface Tau2PhaseReport {
  wall_ms: number;
  tasks: number;
  trials: number;
  /** Trials whose end state has the expected hash. */
  db_match: { count: number; rate: number | null };
  /** τ-bench's pass^k over the tasks, k = 1..trials. */
  pass_hat_k: Record<string, number>;
  mean_steps: number | null;
  p95_steps: number | null;
  cost: CostTotal;
  tokens: number;
  /** Committed writes beyond the ground truth's, over all trials (must be 0). */
  duplicate_writes: number;
  /** Trials whose effects[] does not list exactly the writes the store applied. */
  unreported_writes: number;
  /** Confirmed effects the runs learnt by a reconcile lookup by key (the write failed for good or was cut off). */
  effects_reconciled: number;
  harness_errors: number;
  /** Prompt tokens charged over all trials, and the part served from a prefix cache (null: not reported). */
  prompt_tokens: number;
  cached_prompt_tokens: number | null;
  /** live-scripted: identifiers shown to the model that the request making a ground-truth call lacked. */
  identifier_check?: IdentifierCheckSummary;
  stop_reasons: Record<string, number>;
  per_task: Tau2TaskReport[];
  chaos_events: ChaosEvent[];
}

export interface IdentifierCheckSummary {
  calls: number;
  identifiers: number;
  missing: number;
  tasks_with_missing: string[];
  /** Estimated prompt tokens per decision request (common/cost/cost.ts estimateTokens). */
  decide_prompt_tokens: { decisions: number; median: number | null; max: number | null };
}

export interface Tau2Report {
  suite: 'tau2-retail';
  generated_at: string;
  metadata: RunMetadata;
  mode: {
    mode: SuiteMode;
    chaos: boolean;
    trials: number;
    seed: number;
    tasks_file: string;
    tasks: number;
    workers: number;
  };
  /** Computing every task's expected end state and replay plan. */
  planning_ms: number;
  phases: Partial<Record<PhaseName, Tau2PhaseReport>>;
  problems: string[];
  ok: boolean;
  /** Every rate of every phase, with its standard error (what --compare reads). */
  rates: RateEntry[];
  cost: CostTotal;
  /** Every trial: outcome, cost, latency, answer and trajectory (the HTML's table). */
  trial_table: TrialRow[];
  trials: Tau2TrialReport[];
  /** --compare: what changed since the previous report. */
  comparison?: Comparison;
}

export interface Tau2ReportMode {
  mode: SuiteMode;
  chaos: boolean;
  trials: number;
  seed: number;
  tasksFile: string;
  tasks: number;
  workers: number;
}

export function buildTau2Report(suite: Tau2SuiteResult, mode: Tau2ReportMode, metadata: RunMetadata): Tau2Report {
  const phases: Tau2Report['phases'] = {};
  const problems: string[] = [];
  const trials: Tau2TrialReport[] = [];
  const table: TrialRow[] = [];
  const rates: RateEntry[] = [];
  const scripted = isScripted(metadata);
  for (const phase of suite.phases) {
    // The scripted model's token counts are made up: no price applies to them.
    const p = scripted ? { ...phase, trials: phase.trials.map((t) => ({ ...t, cost_usd: null })) } : phase;
    const report = phaseReport(p.trials, p.wallMs, p.chaos, scripted);
    phases[p.phase] = report;
    if (report.duplicate_writes > 0) problems.push(`${p.phase}: ${report.duplicate_writes} duplicate writes`);
    if (report.unreported_writes > 0)
      problems.push(`${p.phase}: ${report.unreported_writes} trials whose effects do not list the writes applied`);
    if (report.harness_errors > 0)
      problems.push(`${p.phase}: ${report.harness_errors} trials the harness could not finish`);
    const mismatches = report.trials - report.db_match.count - report.harness_errors;
    // Replay: the ground truth is what runs; an end state off it is the runtime's fault.
    if (mode.mode !== 'live' && mismatches > 0)
      problems.push(`${p.phase}: ${mismatches} trials whose database is not the expected one`);
    const ids = report.identifier_check;
    if (ids && ids.missing > 0)
      problems.push(
        `${p.phase}: ${ids.missing} identifiers shown to the model were missing from the request that needed them, in ${ids.tasks_with_missing.length} tasks`,
      );
    rates.push(rateEntry(p.phase, 'db_match', { value: report.db_match.rate, n: report.trials }));
    const passed = p.trials.filter((t) => t.passed).length;
    rates.push(
      rateEntry(p.phase, 'passed', { value: report.trials ? passed / report.trials : null, n: report.trials }),
    );
    for (const t of p.trials) {
      const { trajectory, transcript, ...details } = t;
      trials.push({ phase: p.phase, ...details });
      table.push({
        id: rowId(p.phase, t.task_id, t.trial),
        phase: p.phase,
        scenario: t.task_id,
        trial: t.trial,
        workflow_id: t.workflow_id,
        url: trialUrl(metadata.web_ui, suite.env, t.workflow_id),
        passed: t.passed,
        stop_reason: t.stop_reason,
        steps: t.steps,
        tokens: t.tokens,
        cost_usd: t.cost_usd,
        latency_ms: t.latency_ms,
        answer: t.answer,
        problems: trialProblems(t),
        trajectory,
        transcript,
      });
    }
  }
  return {
    suite: 'tau2-retail',
    generated_at: metadata.date,
    metadata,
    mode: {
      mode: mode.mode,
      chaos: mode.chaos,
      trials: mode.trials,
      seed: mode.seed,
      tasks_file: mode.tasksFile,
      tasks: mode.tasks,
      workers: mode.workers,
    },
    planning_ms: suite.planningMs,
    phases,
    problems,
    ok: problems.length === 0,
    rates,
    cost: totalCost(table, scripted),
    trial_table: table,
    trials,
  };
}

/** Why a trial failed, one line each (none when it passed). */
export function trialProblems(t: TaskTrialResult): string[] {
  return [
    ...(t.identifier_check?.missing ?? []).map(
      (m) => `request ${m.request + 1}: ${m.tool} needs ${m.arg} ${m.id}, shown earlier, not in the request`,
    ),
    t.error,
    t.db_match ? undefined : `end state ${t.end_hash ?? 'unknown'}, expected ${t.expected_hash}`,
    t.duplicate_writes ? `${t.duplicate_writes} duplicate writes` : undefined,
    t.error === undefined && t.effects_confirmed !== t.applied_writes
      ? `effects[] lists ${t.effects_confirmed} confirmed writes, the store applied ${t.applied_writes}`
      : undefined,
  ].filter((w): w is string => w !== undefined);
}

export function phaseReport(
  trials: readonly TaskTrialResult[],
  wallMs: number,
  chaos: ChaosEvent[] = [],
  /** The runs' model was the scripted one: no cost (said so), never a dollar figure. */
  scripted = false,
): Tau2PhaseReport {
  const byTask = new Map<string, TaskTrialResult[]>();
  for (const t of trials) byTask.set(t.task_id, [...(byTask.get(t.task_id) ?? []), t]);
  const scored = trials.map((t) => ({ scenario: t.task_id, verdict: { passed: t.passed } }));
  const steps = trials.map((t) => t.steps);
  const matches = trials.filter((t) => t.db_match).length;
  const stopReasons: Record<string, number> = {};
  for (const t of trials) {
    const reason = t.error ? 'harness_error' : (t.stop_reason ?? 'none');
    stopReasons[reason] = (stopReasons[reason] ?? 0) + 1;
  }
  return {
    wall_ms: wallMs,
    tasks: byTask.size,
    trials: trials.length,
    db_match: { count: matches, rate: trials.length ? matches / trials.length : null },
    pass_hat_k: passHatK(scored),
    mean_steps: mean(steps),
    p95_steps: percentile(steps, 95),
    cost: totalCost(trials, scripted),
    tokens: sum(trials.map((t) => t.tokens)),
    duplicate_writes: sum(trials.map((t) => t.duplicate_writes)),
    unreported_writes: trials.filter((t) => t.error === undefined && t.effects_confirmed !== t.applied_writes).length,
    effects_reconciled: sum(trials.map((t) => t.effects_reconciled)),
    harness_errors: trials.filter((t) => t.error !== undefined).length,
    prompt_tokens: sum(trials.map((t) => t.prompt_tokens)),
    cached_prompt_tokens: trials.every((t) => t.cached_prompt_tokens === null)
      ? null
      : sum(trials.map((t) => t.cached_prompt_tokens ?? 0)),
    ...identifierSummary(trials),
    stop_reasons: stopReasons,
    per_task: [...byTask].map(([taskId, ts]) => ({
      task_id: taskId,
      trials: ts.length,
      db_matches: ts.filter((t) => t.db_match).length,
      pass_hat_k: passHatK(ts.map((t) => ({ scenario: taskId, verdict: { passed: t.passed } }))),
      mean_steps: mean(ts.map((t) => t.steps)),
      cost_usd: totalCost(ts, scripted).total_usd,
    })),
    chaos_events: chaos,
  };
}

// ---- terminal ------------------------------------------------------------------------------

export function tau2TrialLine(phase: string, done: number, total: number, t: TaskTrialResult): string {
  const what = t.error
    ? t.error
    : `${t.db_match ? 'db match' : 'DB MISMATCH'}, ${t.stop_reason ?? 'no stop reason'}, ${t.steps} steps, ` +
      `${t.applied_writes ?? '?'}/${t.gold_writes} writes${t.duplicate_writes ? `, ${t.duplicate_writes} DUPLICATE` : ''}`;
  return `${trialLineStart(phase, done, total, t.passed)} task ${t.task_id} #${t.trial}: ${what}`;
}

export function tau2Table(report: Tau2Report): string {
  const cols = phasesIn(report.phases);
  const rows: string[][] = [['', ...cols]];
  const row = (name: string, f: (p: Tau2PhaseReport) => string) =>
    rows.push([name, ...cols.map((c) => f(report.phases[c]!))]);
  row('tasks × trials', (p) => `${p.tasks} × ${p.trials / Math.max(1, p.tasks)}`);
  row('db match', (p) => `${p.db_match.count}/${p.trials} (${formatRate(p.db_match.rate, p.trials)})`);
  for (const k of Object.keys(report.phases.baseline?.pass_hat_k ?? {}))
    row(`pass^${k}`, (p) => (p.pass_hat_k[k] ?? 0).toFixed(3));
  row('duplicate writes', (p) => String(p.duplicate_writes));
  row('effects reconciled', (p) => String(p.effects_reconciled));
  row('mean steps', (p) => (p.mean_steps === null ? '-' : p.mean_steps.toFixed(1)));
  row(
    'prompt tokens (cached)',
    (p) => `${p.prompt_tokens}${p.cached_prompt_tokens === null ? '' : ` (${p.cached_prompt_tokens} cached)`}`,
  );
  if (report.phases.baseline?.identifier_check)
    row('ids missing at a call', (p) =>
      p.identifier_check
        ? `${p.identifier_check.missing} of ${p.identifier_check.identifiers} (${p.identifier_check.tasks_with_missing.length} tasks)`
        : '-',
    );
  row('cost', (p) => formatTotalCost(p.cost));
  row('wall time', (p) => `${(p.wall_ms / 1000).toFixed(1)} s`);
  return alignedColumns(rows);
}

function identifierSummary(trials: readonly TaskTrialResult[]): { identifier_check?: IdentifierCheckSummary } {
  const checked = trials.filter((t) => t.identifier_check);
  if (checked.length === 0) return {};
  const tokens = checked.flatMap((t) => t.identifier_check!.prompt_tokens);
  return {
    identifier_check: {
      calls: sum(checked.map((t) => t.identifier_check!.calls)),
      identifiers: sum(checked.map((t) => t.identifier_check!.identifiers)),
      missing: sum(checked.map((t) => t.identifier_check!.missing.length)),
      tasks_with_missing: [
        ...new Set(checked.filter((t) => t.identifier_check!.missing.length > 0).map((t) => t.task_id)),
      ],
      decide_prompt_tokens: {
        decisions: tokens.length,
        median: percentile(tokens, 50),
        max: tokens.length ? Math.max(...tokens) : null,
      },
    },
  };
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
