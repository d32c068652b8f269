// The scenario suite's report.html in the harness's page (eval/harness/report-page-html.ts): a bar
// chart per metric, the per-slice tables, the non-negotiables.
import { phasesIn } from './harness/terminal-table';
import { esc } from './harness/html-escape';
import type { Metrics, Rate } from './metrics';
import { METRIC_NAMES } from './metrics';
import type { Report } from './report';
import { formatMetric } from './report';
import { METRIC_MEANINGS } from './metric-meanings';
import { barChartHtml, passHatKRowHtml, reportPageHtml } from './harness/report-page-html';
import { formatRate } from './harness/standard-error';

export function reportHtml(report: Report): string {
  const phases = phasesIn(report.phases);
  const m = report.mode;
  return reportPageHtml({
    title: 'Agent evaluation',
    heading: 'Agent evaluation',
    generatedAt: report.generated_at,
    ok: report.ok,
    summary: `${esc(report.generated_at)} · ${m.live ? 'live model' : 'scripted model (offline)'} · ${m.scenarios} scenarios × k=${m.k} · ${m.workers} workers${m.chaos ? ` · chaos seed ${m.seed}${m.chaos_once ? ' (one cycle)' : ''}` : ''}`,
    problems: report.non_negotiables.problems,
    problemsHeading: 'Non-negotiables broken',
    noProblems:
      '<p>Non-negotiables held: unsafe_success = 0, every end state as expected, every run with a known stop reason.</p>',
    metadata: report.metadata,
    cost: report.cost,
    comparison: report.comparison,
    figuresHeading: 'Metrics',
    figureTable: metricTable(report, phases),
    charts: METRIC_NAMES.map((name) => chart(name, report, phases)),
    sectionsHeading: 'Slices',
    sections: phases.map((p) => sliceTable(report, p)),
    chaos: report.phases.chaos ? { events: report.phases.chaos.chaos_events, seed: m.seed } : undefined,
    trialTable: report.trial_table,
    after: [],
  });
}

function metricTable(report: Report, phases: ReadonlyArray<'baseline' | 'chaos'>): string {
  const head = `<tr><th>metric</th>${phases.map((p) => `<th>${p}</th>`).join('')}<th>meaning</th></tr>`;
  const rows = METRIC_NAMES.map(
    (name) =>
      `<tr><td><code>${name}</code></td>${phases.map((p) => `<td>${esc(formatMetric(name, report.phases[p]!.metrics))}</td>`).join('')}<td>${esc(METRIC_MEANINGS[name] ?? '')}</td></tr>`,
  );
  const ks = Object.keys(report.phases.baseline?.metrics.pass_hat_k ?? {});
  const passRows = ks.map((k) =>
    passHatKRowHtml(
      k,
      phases.map((p) => (report.phases[p]!.metrics.pass_hat_k[k] ?? 0).toFixed(2)),
    ),
  );
  return `<table>${head}${rows.join('')}${passRows.join('')}</table>`;
}

/** The metric's value as a bar length: rates on 0..1, counts and times against the larger phase. */
function numeric(name: keyof Metrics, m: Metrics): number | null {
  const v = m[name];
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return v;
  if (name === 'unsafe_success') return (v as Metrics['unsafe_success']).count;
  if (typeof v === 'object' && 'n' in v) return (v as Rate).value;
  return null;
}

function chart(name: keyof Metrics, report: Report, phases: ReadonlyArray<'baseline' | 'chaos'>): string {
  const values = phases.map((p) => numeric(name, report.phases[p]!.metrics));
  const isRate = typeof report.phases[phases[0]!]!.metrics[name] === 'object' && name !== 'unsafe_success';
  return barChartHtml({
    name,
    meaning: METRIC_MEANINGS[name] ?? '',
    phases,
    value: (p) => values[phases.indexOf(p)],
    text: (p) => formatMetric(name, report.phases[p]!.metrics),
    max: isRate ? 1 : Math.max(1e-9, ...values.map((v) => v ?? 0)),
  });
}

function sliceTable(report: Report, phase: 'baseline' | 'chaos'): string {
  const slices = report.phases[phase]!.slices;
  const rows = Object.entries(slices).map(
    ([slice, s]) =>
      `<tr><td>${esc(slice)}</td><td>${s.runs}</td><td>${formatRate(s.task_success.value, s.task_success.n)}</td><td class="${s.unsafe ? 'bad' : ''}">${s.unsafe}</td><td>${Object.entries(
        s.pass_hat_k,
      )
        .map(([k, v]) => `pass^${k}=${v.toFixed(2)}`)
        .join(' ')}</td></tr>`,
  );
  return `<h3>${phase}</h3><table><tr><th>slice</th><th>runs</th><th>task_success</th><th>unsafe</th><th>pass^k</th></tr>${rows.join('')}</table>`;
}
