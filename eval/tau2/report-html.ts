// The τ² retail suite's report.html in the harness's page (eval/harness/report-page-html.ts): its
// figures with a bar per phase and the tasks table; every trial's transcript is in its row of the
// trial table.
import { phasesIn } from '../harness/terminal-table';
import { esc } from '../harness/html-escape';
import { barChartHtml, passHatKRowHtml, reportPageHtml } from '../harness/report-page-html';
import { formatRate } from '../harness/standard-error';
import type { PhaseName } from '../harness/phases';
import { isScripted } from '../harness/run-metadata';
import { formatCost, formatTotalCost } from '../harness/trial-table';
import type { Tau2PhaseReport, Tau2Report } from './report';

interface Figure {
  name: string;
  meaning: string;
  value: (p: Tau2PhaseReport) => number | null;
  text: (p: Tau2PhaseReport) => string;
  /** Rates are drawn on 0..1; other figures against the larger phase. */
  rate?: boolean;
}

const FIGURES: Figure[] = [
  {
    name: 'db_match',
    meaning: "trials whose end database has the hash of the ground truth's end state (τ²'s criterion)",
    value: (p) => p.db_match.rate,
    text: (p) => `${p.db_match.count}/${p.trials} (${formatRate(p.db_match.rate, p.trials)})`,
    rate: true,
  },
  {
    name: 'pass^1',
    meaning: 'τ-bench: the chance that one trial of a task succeeds, averaged over tasks',
    value: (p) => p.pass_hat_k['1'] ?? null,
    text: (p) => (p.pass_hat_k['1'] ?? 0).toFixed(3),
    rate: true,
  },
  {
    name: 'duplicate_writes',
    meaning: "writes committed beyond the ground truth's (each effect exactly once: must be 0)",
    value: (p) => p.duplicate_writes,
    text: (p) => String(p.duplicate_writes),
  },
  {
    name: 'effects_reconciled',
    meaning: 'confirmed writes a run learnt by a reconcile lookup by key (the write failed for good or was cut off)',
    value: (p) => p.effects_reconciled,
    text: (p) => String(p.effects_reconciled),
  },
  {
    name: 'mean_steps',
    meaning: 'steps per run (decisions: tool calls, messages, the final answer)',
    value: (p) => p.mean_steps,
    text: (p) => (p.mean_steps === null ? '-' : p.mean_steps.toFixed(1)),
  },
  {
    name: 'cost_usd',
    meaning: "what the runs' LLM calls cost, all trials",
    value: (p) => p.cost.total_usd,
    text: (p) => formatTotalCost(p.cost),
  },
  {
    name: 'prompt_tokens',
    meaning: 'prompt tokens charged over all trials (the cached part in brackets, when the provider reports it)',
    value: (p) => p.prompt_tokens,
    text: (p) => `${p.prompt_tokens}${p.cached_prompt_tokens === null ? '' : ` (${p.cached_prompt_tokens} cached)`}`,
  },
  {
    name: 'wall_s',
    meaning: 'wall time of the phase',
    value: (p) => p.wall_ms / 1000,
    text: (p) => `${(p.wall_ms / 1000).toFixed(1)} s`,
  },
];

/** What ran: only `live` is a model's score; the other modes are the ground truth, scripted. */
const MODE_TEXT: Record<Tau2Report['mode']['mode'], string> = {
  replay: 'replay of the ground truth (scripted agent and customer): not a model score',
  live: 'live model and LLM customer',
  'live-scripted':
    "live path with a scripted server playing the ground truth and τ²'s user simulator: not a model score",
};

export function tau2ReportHtml(report: Tau2Report): string {
  const phases = phasesIn(report.phases);
  const m = report.mode;
  return reportPageHtml({
    title: 'τ² retail evaluation',
    heading: 'τ²-bench retail',
    generatedAt: report.generated_at,
    ok: report.ok,
    summary: `${esc(report.generated_at)} · ${MODE_TEXT[m.mode]} · ${m.tasks} tasks × ${m.trials} trials from <code>${esc(m.tasks_file)}</code> · ${m.workers} workers${m.chaos ? ` · chaos seed ${m.seed}` : ''}`,
    problems: report.problems,
    problemsHeading: 'Problems',
    noProblems: '<p>Every end state as expected where it must be, no duplicate write.</p>',
    metadata: report.metadata,
    cost: report.cost,
    comparison: report.comparison,
    figuresHeading: 'Figures',
    figureTable: figureTable(report, phases),
    charts: FIGURES.map((f) => chart(f, report, phases)),
    sectionsHeading: 'Tasks',
    sections: phases.map((p) => taskTable(report.phases[p]!, p, isScripted(report.metadata))),
    chaos: report.phases.chaos ? { events: report.phases.chaos.chaos_events, seed: m.seed } : undefined,
    trialTable: report.trial_table,
    after: [],
  });
}

function figureTable(report: Tau2Report, phases: readonly PhaseName[]): string {
  const head = `<tr><th>figure</th>${phases.map((p) => `<th>${p}</th>`).join('')}<th>meaning</th></tr>`;
  const rows = FIGURES.map(
    (f) =>
      `<tr><td><code>${f.name}</code></td>${phases.map((p) => `<td>${esc(f.text(report.phases[p]!))}</td>`).join('')}<td>${esc(f.meaning)}</td></tr>`,
  );
  const ks = Object.keys(report.phases[phases[0]!]?.pass_hat_k ?? {}).filter((k) => k !== '1');
  const passRows = ks.map((k) =>
    passHatKRowHtml(
      k,
      phases.map((p) => (report.phases[p]!.pass_hat_k[k] ?? 0).toFixed(3)),
    ),
  );
  return `<table>${head}${rows.join('')}${passRows.join('')}</table>`;
}

function chart(f: Figure, report: Tau2Report, phases: readonly PhaseName[]): string {
  const values = phases.map((p) => f.value(report.phases[p]!));
  return barChartHtml({
    name: f.name,
    meaning: f.meaning,
    phases,
    value: (p) => values[phases.indexOf(p)],
    text: (p) => f.text(report.phases[p]!),
    max: f.rate ? 1 : Math.max(1e-9, ...values.map((v) => v ?? 0)),
  });
}

function taskTable(phase: Tau2PhaseReport, name: PhaseName, scripted: boolean): string {
  const rows = phase.per_task.map(
    (t) =>
      `<tr><td>${esc(t.task_id)}</td><td class="${t.db_matches === t.trials ? '' : 'bad'}">${t.db_matches}/${t.trials}</td><td>${Object.entries(
        t.pass_hat_k,
      )
        .map(([k, v]) => `pass^${k}=${v.toFixed(2)}`)
        .join(
          ' ',
        )}</td><td>${t.mean_steps === null ? '-' : t.mean_steps.toFixed(1)}</td><td>${formatCost(t.cost_usd, scripted)}</td></tr>`,
  );
  const reasons = Object.entries(phase.stop_reasons)
    .map(([r, n]) => `${esc(r)}: ${n}`)
    .join(' · ');
  return `<h3>${name}</h3><p>stop reasons: ${reasons}</p><details><summary>${phase.tasks} tasks</summary><table><tr><th>task</th><th>db match</th><th>pass^k</th><th>mean steps</th><th>cost</th></tr>${rows.join('')}</table></details>`;
}
