// The report people read: one self-contained HTML file (no scripts, no external assets) with the
// run's metadata, a bar chart per metric (inline SVG, baseline beside chaos), per-slice tables, the
// chaos schedule, the comparison with a previous report, and every trial with its trajectory.
import { esc } from './harness/html-escape';
import type { Metrics, Rate } from './metrics';
import { METRIC_NAMES } from './metrics';
import type { Report } from './report';
import { formatMetric } from './report';
import { METRIC_MEANINGS } from './metric-meanings';
import { comparisonHtml, metadataHtml, trialTableHtml } from './harness/report-sections-html';
import { formatRate } from './harness/standard-error';

export const COLORS = { baseline: '#3b6ea8', chaos: '#c0562f' } as const;

/** The reports' look (every suite's report uses it). */
export const REPORT_STYLE = `<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.ok{color:#1a7f37;font-weight:bold}.bad{color:#b42318;font-weight:bold}
.charts{display:flex;flex-wrap:wrap;gap:1em}.chart{border:1px solid #ddd;padding:.5em;width:21em}
.chart h4{margin:0 0 .3em;font-size:13px}.chart p{margin:.3em 0 0;font-size:12px;color:#555}
code{font-size:12px}details{margin:.3em 0}
table.trials tr.steps td{border-top:none;padding:0 .6em}table.trials tr.steps summary{font-size:12px;color:#555}
table.meta th{width:10em}
</style>`;

export function reportHtml(report: Report): string {
  const phases = (['baseline', 'chaos'] as const).filter((p) => report.phases[p]);
  const verdict = report.ok ? '<p class="ok">PASS</p>' : '<p class="bad">FAIL</p>';
  const problems = report.non_negotiables.problems.map((p) => `<li>${esc(p)}</li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Agent evaluation ${esc(report.generated_at)}</title>
${REPORT_STYLE}</head><body>
<h1>Agent evaluation</h1>
${verdict}
<p>${esc(report.generated_at)} · ${report.mode.live ? 'live model' : 'scripted model (offline)'} · ${report.mode.scenarios} scenarios × k=${report.mode.k} · ${report.mode.workers} workers${report.mode.chaos ? ` · chaos seed ${report.mode.seed}${report.mode.chaos_once ? ' (one cycle)' : ''}` : ''}</p>
${problems ? `<h2>Non-negotiables broken</h2><ul class="bad">${problems}</ul>` : '<p>Non-negotiables held: unsafe_success = 0, every end state as expected, every run with a known stop reason.</p>'}
${metadataHtml(report.metadata, report.cost)}
${comparisonHtml(report.comparison)}
<h2>Metrics</h2>
<p>Rates are shown ± their standard error, sqrt(p(1-p)/n).</p>
${metricTable(report, phases)}
<div class="charts">${METRIC_NAMES.map((name) => chart(name, report, phases)).join('\n')}</div>
<h2>Slices</h2>
${phases.map((p) => sliceTable(report, p)).join('\n')}
${phases.includes('chaos') ? chaosTable(report) : ''}
${trialTableHtml(report.trial_table, report.metadata.web_ui.note)}
</body></html>
`;
}

function metricTable(report: Report, phases: ReadonlyArray<'baseline' | 'chaos'>): string {
  const head = `<tr><th>metric</th>${phases.map((p) => `<th>${p}</th>`).join('')}<th>meaning</th></tr>`;
  const rows = METRIC_NAMES.map(
    (name) =>
      `<tr><td><code>${name}</code></td>${phases.map((p) => `<td>${esc(formatMetric(name, report.phases[p]!.metrics))}</td>`).join('')}<td>${esc(METRIC_MEANINGS[name] ?? '')}</td></tr>`,
  );
  const ks = Object.keys(report.phases.baseline?.metrics.pass_hat_k ?? {});
  const passRows = ks.map(
    (k) =>
      `<tr><td><code>pass^${k}</code></td>${phases.map((p) => `<td>${(report.phases[p]!.metrics.pass_hat_k[k] ?? 0).toFixed(2)}</td>`).join('')}<td>τ-bench: the chance that k=${k} trials of a task all succeed</td></tr>`,
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
  const max = isRate ? 1 : Math.max(1e-9, ...values.map((v) => v ?? 0));
  const width = 300;
  const bars = phases
    .map((p, i) => {
      const v = values[i];
      const w = v === null ? 0 : Math.max(1, (v / max) * (width - 160));
      const y = 6 + i * 26;
      return `<text x="0" y="${y + 14}" font-size="12">${p}</text><rect x="62" y="${y}" width="${w.toFixed(1)}" height="18" fill="${COLORS[p]}"/><text x="${(66 + w).toFixed(1)}" y="${y + 14}" font-size="12">${esc(formatMetric(name, report.phases[p]!.metrics))}</text>`;
    })
    .join('');
  const height = 10 + phases.length * 26;
  return `<div class="chart"><h4><code>${name}</code></h4><svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="${name}">${bars}</svg><p>${esc(METRIC_MEANINGS[name] ?? '')}</p></div>`;
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

function chaosTable(report: Report): string {
  const rows = report.phases.chaos!.chaos_events.map(
    (e) => `<tr><td>+${(e.atMs / 1000).toFixed(1)} s</td><td>${e.kind}</td><td>${esc(e.detail)}</td></tr>`,
  );
  return `<h2>Chaos schedule (seed ${report.mode.seed})</h2><table><tr><th>at</th><th>fault</th><th>detail</th></tr>${rows.join('')}</table>`;
}
