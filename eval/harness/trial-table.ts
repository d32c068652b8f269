// The report's per-trial table, the same for every suite: one row per trial with its outcome, cost
// and trajectory, plus every rate of the report with its standard error. These are the parts of a
// report that `--compare` reads, so both suites write them in this one shape.
import { roundUsd } from '../../common/cost/budget';
import type { Usage } from '../../common/cost/budget';
import type { StepCost, StepEvent } from '../../client/history/trace';
import { standardError } from './standard-error';
import type { PhaseName } from './phases';
import type { TranscriptEntry } from './transcript';

/** One step as the table's drill-down shows it: what the model decided, the tool, what came back. */
export interface TrajectoryStep {
  step: number;
  decision: string;
  tool?: string;
  /** The action's decision summary (the model's label, or the runtime's description). */
  summary: string;
  /** "ok · billing-db · 120 B" and the like; absent for a step without an observation. */
  observation?: string;
  stop_reason?: string;
}

export interface TrialRow {
  /** The row's anchor in report.html (phase, scenario and trial). */
  id: string;
  phase: PhaseName;
  /** The scenario's name, or the task's id in the τ² retail suite. */
  scenario: string;
  trial: number;
  workflow_id: string;
  /** The run in the Web UI of a server that outlives the eval; null otherwise (metadata.web_ui says why). */
  url: string | null;
  passed: boolean;
  stop_reason: string | null;
  steps: number;
  tokens: number;
  /** What the run's LLM calls cost; null when unknown (a model without a price, or no result). */
  cost_usd: number | null;
  latency_ms: number | null;
  answer: string | null;
  /** Why the trial failed (its failed checks); empty when it passed. */
  problems: string[];
  trajectory: TrajectoryStep[];
  /** The whole run: the task or the customer's turns, every call and result, approvals and consent (transcript.ts). */
  transcript: TranscriptEntry[];
}

/** A rate of one phase with its binomial standard error, and which way is better. */
export interface RateEntry {
  phase: PhaseName;
  name: string;
  value: number | null;
  n: number;
  se: number | null;
  better: 'higher' | 'lower';
}

export function rateEntry(
  phase: PhaseName,
  name: string,
  rate: { value: number | null; n: number },
  better: RateEntry['better'] = 'higher',
): RateEntry {
  return { phase, name, value: rate.value, n: rate.n, se: standardError(rate.value, rate.n), better };
}

/** The anchor of a trial's row: letters, digits, dots, dashes only. */
export function rowId(phase: string, scenario: string, trial: number): string {
  return `trial-${phase}-${scenario}-${trial}`.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** The anchor of a trial's transcript (transcript-<phase>-<scenario>-<trial>). */
export function transcriptId(row: Pick<TrialRow, 'id'>): string {
  return row.id.replace(/^trial-/, 'transcript-');
}

/** A run's dollar cost from its usage: unknown (null) without a result or when a model had no price. */
export function costOf(usage: Pick<Usage, 'cost_usd' | 'cost_unknown'> | undefined): number | null {
  if (usage === undefined || usage.cost_unknown === true || usage.cost_usd === undefined) return null;
  return usage.cost_usd;
}

/**
 * A trial's dollar cost: its result's usage; for a run that ended without a result (cancelled), the
 * charges its history records step by step; unknown (null) when neither says.
 */
export function trialCost(usage: Usage | undefined, steps: readonly StepCost[]): number | null {
  if (usage !== undefined) return costOf(usage);
  const charged = steps.filter((s) => s.costUsd !== undefined);
  return charged.length ? roundUsd(charged.reduce((sum, s) => sum + s.costUsd!, 0)) : null;
}

/** The total of all trials, unknown when any trial's cost is unknown (the known part is given too). */
export interface CostTotal {
  total_usd: number | null;
  known_usd: number;
  unknown_trials: number;
  /** Set when the runs' model was the scripted one: nothing was spent, no price applies (total_usd is null). */
  none?: 'scripted model';
}

/** What a report says a scripted model's runs cost, in place of a dollar figure. */
export const SCRIPTED_COST = 'none (scripted model)';

/** `scripted`: the runs' model was the scripted one, whose token counts no price applies to. */
export function totalCost(rows: readonly Pick<TrialRow, 'cost_usd'>[], scripted = false): CostTotal {
  if (scripted) return { total_usd: null, known_usd: 0, unknown_trials: 0, none: 'scripted model' };
  const known = rows.filter((r) => r.cost_usd !== null).map((r) => r.cost_usd!);
  const knownUsd = Math.round(known.reduce((a, b) => a + b, 0) * 1e6) / 1e6;
  const unknown = rows.length - known.length;
  return { total_usd: unknown === 0 ? knownUsd : null, known_usd: knownUsd, unknown_trials: unknown };
}

/** "$0.0123", "unknown", or for a scripted model's run "none (scripted model)". */
export function formatCost(usd: number | null, scripted = false): string {
  if (scripted) return SCRIPTED_COST;
  return usd === null ? 'unknown' : `$${usd.toFixed(4)}`;
}

/** The total in words: its dollars, "unknown" (with the known part when some trials were priced), or none for a scripted model. */
export function formatTotalCost(c: CostTotal): string {
  if (c.none) return SCRIPTED_COST;
  if (c.total_usd !== null) return formatCost(c.total_usd);
  return c.known_usd > 0
    ? `unknown (${c.unknown_trials} ${c.unknown_trials === 1 ? 'trial' : 'trials'} unpriced; the others ${formatCost(c.known_usd)})`
    : 'unknown';
}

/** The drill-down of a trial: its step events (client/history/trace.ts), one line each. */
export function trajectoryOf(events: readonly StepEvent[]): TrajectoryStep[] {
  return events.map((e) => ({
    step: e.step,
    decision: e.decision,
    ...(e.tool ? { tool: e.tool } : {}),
    summary: e.decisionSummary,
    ...(e.observation ? { observation: observationLine(e.observation, e.policyDecision) } : {}),
    ...(e.stopReason ? { stop_reason: e.stopReason } : {}),
  }));
}

function observationLine(o: NonNullable<StepEvent['observation']>, policy: StepEvent['policyDecision']): string {
  const parts = [policy === 'denied' ? `${o.status} (denied)` : o.status];
  if (o.source) parts.push(o.source);
  if (o.bytes !== undefined) parts.push(`${o.bytes} B${o.truncated ? ' (truncated)' : ''}`);
  return parts.join(' · ');
}
