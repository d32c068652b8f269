// The guide's metrics over a set of evaluated runs, and pass^k (τ-bench). Pure: every input is
// read from the runs' histories (RunRecord) and their verdicts (checks.ts), never from a script.
import { DOMAINS, registryOfDomain } from '../domains/index';
import { isStopReason } from '../common/stop-reasons';
import type { RunVerdict } from './checks';
import type { RunRecord } from './run-record';
import { answerOf, stopReasonOf } from './run-record';
import { unsupportedClaims } from './claims';

/** The scenarios run the support domain: its tools. */
const SUPPORT_TOOLS = registryOfDomain(DOMAINS.support!);

export interface ScoredRun {
  scenario: string;
  slice: string;
  trial: number;
  record: RunRecord;
  verdict: RunVerdict;
  /** The tools the task needs (scenario expect.tools). */
  neededTools: string[];
  expectEscalate: boolean;
  /** Chaos cancelled this run on purpose. */
  cancelledOnPurpose: boolean;
}

/** A rate with its denominator; null when nothing was there to measure. */
export interface Rate {
  value: number | null;
  n: number;
}

export interface Metrics {
  runs: number;
  task_success: Rate;
  unsafe_success: { count: number; rate: number | null };
  supported_answer_rate: Rate;
  tool_selection_accuracy: Rate;
  invalid_argument_rate: Rate;
  unnecessary_tool_rate: Rate;
  mean_steps: number | null;
  p95_steps: number | null;
  repeated_action_rate: Rate;
  recovery_after_tool_error: Rate;
  ambiguous_effect_rate: Rate;
  mean_latency_ms_per_success: number | null;
  p95_latency_ms_per_success: number | null;
  tokens_per_success: number | null;
  human_escalation_precision: Rate;
  /** Non-negotiables: runs without a known stop reason, runs whose end state is not the expected one. */
  unknown_stop_reasons: number;
  end_state_mismatches: number;
  /** pass^k for k = 1..trials (τ-bench): the chance that k trials of a task all succeed. */
  pass_hat_k: Record<string, number>;
}

const rate = (hits: number, n: number): Rate => ({ value: n === 0 ? null : hits / n, n });

/** What the rates count, over a phase's runs. */
interface Counts {
  requested: number;
  rightTool: number;
  repeated: number;
  badArgs: number;
  executed: number;
  unnecessary: number;
  effects: number;
  ambiguous: number;
  answered: number;
  supported: number;
  withError: number;
  recovered: number;
  escalated: number;
  rightEscalations: number;
}

/** Adds one run's tool requests, calls, effects, answer, errors and escalation to the counts. */
function countRun(run: ScoredRun, c: Counts): void {
  const { record } = run;
  const toolDecisions = record.decisions.filter((d) => d.kind === 'tool');
  const seen = new Set<string>();
  for (const d of toolDecisions) {
    c.requested++;
    if (run.neededTools.includes(d.tool!)) c.rightTool++;
    const sig = `${d.tool}:${d.digest}`;
    if (seen.has(sig)) c.repeated++;
    seen.add(sig);
  }
  // An argument the runtime refused: the schema (tool_bad_args) or the object (another user).
  const stop = stopReasonOf(record) ?? '';
  if (stop.startsWith('tool_bad_args:') || stop === 'policy_denied:other_user') c.badArgs++;
  c.badArgs += record.calls.filter((call) => rejected(call.observation?.data) === 'not_principal').length;

  const done = new Set<string>();
  for (const call of record.calls) {
    c.executed++;
    const sig = `${call.tool}:${call.digest}`;
    if (!run.neededTools.includes(call.tool) || done.has(sig)) c.unnecessary++;
    if (call.outcome === 'ok') done.add(sig);
  }

  for (const e of record.result?.effects ?? []) {
    c.effects++;
    if (e.state === 'ambiguous') c.ambiguous++;
  }

  const answer = answerOf(record);
  if (answer !== undefined) {
    c.answered++;
    if (unsupportedClaims(answer, record).length === 0) c.supported++;
  }

  if (hadToolError(record)) {
    c.withError++;
    if (run.verdict.passed) c.recovered++;
  }
  if (record.decisions.some((d) => d.kind === 'escalate')) {
    c.escalated++;
    if (run.expectEscalate) c.rightEscalations++;
  }
}

export function computeMetrics(runs: readonly ScoredRun[]): Metrics {
  const successes = runs.filter((r) => r.verdict.passed);
  const c: Counts = {
    requested: 0,
    rightTool: 0,
    repeated: 0,
    badArgs: 0,
    executed: 0,
    unnecessary: 0,
    effects: 0,
    ambiguous: 0,
    answered: 0,
    supported: 0,
    withError: 0,
    recovered: 0,
    escalated: 0,
    rightEscalations: 0,
  };
  for (const run of runs) countRun(run, c);

  const steps = runs.map((r) => r.record.decisions.length);
  const latencies = successes
    .filter((r) => r.record.closedAtMs !== undefined)
    .map((r) => r.record.closedAtMs! - r.record.startedAtMs);
  const tokens = runs.reduce((sum, r) => sum + r.record.tokens, 0);
  const unsafe = runs.filter((r) => r.verdict.unsafe).length;

  return {
    runs: runs.length,
    task_success: rate(successes.length, runs.length),
    unsafe_success: { count: unsafe, rate: runs.length ? unsafe / runs.length : null },
    supported_answer_rate: rate(c.supported, c.answered),
    tool_selection_accuracy: rate(c.rightTool, c.requested),
    invalid_argument_rate: rate(c.badArgs, c.requested),
    unnecessary_tool_rate: rate(c.unnecessary, c.executed),
    mean_steps: mean(steps),
    p95_steps: percentile(steps, 95),
    repeated_action_rate: rate(c.repeated, c.requested),
    recovery_after_tool_error: rate(c.recovered, c.withError),
    ambiguous_effect_rate: rate(c.ambiguous, c.effects),
    mean_latency_ms_per_success: mean(latencies),
    p95_latency_ms_per_success: percentile(latencies, 95),
    tokens_per_success: successes.length ? tokens / successes.length : null,
    human_escalation_precision: rate(c.rightEscalations, c.escalated),
    unknown_stop_reasons: runs.filter((r) => !isStopReason(stopReasonOf(r.record))).length,
    end_state_mismatches: runs.filter((r) => r.verdict.checks.some((c) => c.name === 'end_state' && !c.ok)).length,
    pass_hat_k: passHatK(runs),
  };
}

/** A tool failed (an attempt failed or timed out, or it answered not ok) somewhere in the run. */
export function hadToolError(record: RunRecord): boolean {
  return record.calls.some((c) => c.attempts > 1 || (c.outcome !== 'ok' && c.outcome !== 'pending'));
}

/**
 * τ-bench's pass^k: per task with n trials of which c succeeded, C(c,k)/C(n,k) (the chance that k
 * trials drawn without replacement all succeed), averaged over tasks; k = 1..min n.
 */
export function passHatK(
  runs: ReadonlyArray<{ scenario: string; verdict: Pick<RunVerdict, 'passed'> }>,
): Record<string, number> {
  const byTask = new Map<string, { n: number; c: number }>();
  for (const r of runs) {
    const t = byTask.get(r.scenario) ?? { n: 0, c: 0 };
    t.n++;
    if (r.verdict.passed) t.c++;
    byTask.set(r.scenario, t);
  }
  const tasks = [...byTask.values()];
  if (tasks.length === 0) return {};
  const maxK = Math.min(...tasks.map((t) => t.n));
  const out: Record<string, number> = {};
  for (let k = 1; k <= maxK; k++) {
    out[String(k)] = tasks.reduce((sum, t) => sum + choose(t.c, k) / choose(t.n, k), 0) / tasks.length;
  }
  return out;
}

export function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let result = 1;
  for (let i = 1; i <= k; i++) result = (result * (n - k + i)) / i;
  return result;
}

export function mean(xs: readonly number[]): number | null {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

/** Nearest-rank percentile. */
export function percentile(xs: readonly number[], p: number): number | null {
  if (!xs.length) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function rejected(data: unknown): unknown {
  return data && typeof data === 'object' ? (data as { rejected?: unknown }).rejected : undefined;
}

/** Metric names in report order, with what each means (the report and docs/evaluation.md use them). */
export const METRIC_NAMES: ReadonlyArray<keyof Metrics> = [
  'task_success',
  'unsafe_success',
  'supported_answer_rate',
  'tool_selection_accuracy',
  'invalid_argument_rate',
  'unnecessary_tool_rate',
  'mean_steps',
  'p95_steps',
  'repeated_action_rate',
  'recovery_after_tool_error',
  'ambiguous_effect_rate',
  'mean_latency_ms_per_success',
  'p95_latency_ms_per_success',
  'tokens_per_success',
  'human_escalation_precision',
  'unknown_stop_reasons',
  'end_state_mismatches',
];

/** True when the tool's effect is real (issue_refund): it must be reconciled when cut off. */
export const isEffectful = (tool: string): boolean => SUPPORT_TOOLS[tool]?.effectful === true;
