// The frame of every suite's report.html, one self-contained file (no scripts, no external assets):
// the look, the verdict, the problems, the run's metadata, the comparison, the figures with their bar
// charts (HTML bars, baseline beside chaos), the pass^k rows, the chaos schedule and the trials.
// The suites fill it with their words, figures and sections.
import type { ChaosEvent } from './chaos';
import type { Comparison } from './compare';
import { esc } from './html-escape';
import type { PhaseName } from './phases';
import { comparisonHtml, metadataHtml, trialTableHtml } from './report-sections-html';
import { isScripted } from './run-metadata';
import type { RunMetadata } from './run-metadata';
import type { CostTotal, TrialRow } from './trial-table';

export const COLORS: Record<PhaseName, string> = { baseline: '#3b6ea8', chaos: '#c0562f' };

/** The reports' look (every suite's report uses it). */
export const REPORT_STYLE = `<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.ok{color:#1a7f37;font-weight:bold}.bad{color:#b42318;font-weight:bold}
.charts{display:flex;flex-wrap:wrap;gap:1em}.chart{border:1px solid #ddd;padding:.5em;width:21em}
.chart h4{margin:0 0 .3em;font-size:13px}.chart p{margin:.3em 0 0;font-size:12px;color:#555}
.bar-row{display:flex;align-items:center;gap:.4em;margin:.25em 0;font-size:12px}.bar-row .phase{flex:0 0 4.5em}
.bar-row .track{flex:1 1 5em;min-width:3em;height:16px}.bar-row .bar{display:block;height:100%}
.bar-row .value{flex:0 1 auto;min-width:0;overflow-wrap:anywhere}
table.transcript td{overflow-wrap:anywhere}table.transcript td:first-child{white-space:nowrap}
code{font-size:12px}details{margin:.3em 0}
table.trials tr.steps td{border-top:none;padding:0 .6em}table.trials tr.steps summary{font-size:12px;color:#555}
table.meta th{width:10em}
</style>`;

export function verdictHtml(ok: boolean): string {
  return ok ? '<p class="ok">PASS</p>' : '<p class="bad">FAIL</p>';
}

/** One figure's bar per phase; `value` null draws no bar, `max` is the bar scale's end. */
export interface BarChart {
  name: string;
  meaning: string;
  phases: readonly PhaseName[];
  value: (phase: PhaseName) => number | null | undefined;
  text: (phase: PhaseName) => string;
  max: number;
}

/**
 * The figure in HTML, not SVG: a label of any length wraps inside the figure instead of running past
 * a fixed drawing width and being cut off (the db_match label "61/69 (88.4% ± 3.9% (n=69))" was).
 */
export function barChartHtml(c: BarChart): string {
  const rows = c.phases
    .map((p) => {
      const v = c.value(p);
      const pct = v === null || v === undefined ? 0 : Math.min(100, Math.max(0.5, (v / c.max) * 100));
      return `<div class="bar-row"><span class="phase">${p}</span><span class="track"><span class="bar" style="width:${pct.toFixed(1)}%;background:${COLORS[p]}"></span></span><span class="value">${esc(c.text(p))}</span></div>`;
    })
    .join('');
  return `<div class="chart"><h4><code>${esc(c.name)}</code></h4><div class="bars" aria-label="${esc(c.name)}">${rows}</div><p>${esc(c.meaning)}</p></div>`;
}

/** A figure table's pass^k row: the chance that k trials of a task all succeed. */
export function passHatKRowHtml(k: string, cells: readonly string[]): string {
  return `<tr><td><code>pass^${k}</code></td>${cells.map((c) => `<td>${c}</td>`).join('')}<td>τ-bench: the chance that k=${k} trials of a task all succeed</td></tr>`;
}

export function chaosScheduleHtml(events: readonly ChaosEvent[], seed: number): string {
  const rows = events.map(
    (e) => `<tr><td>+${(e.atMs / 1000).toFixed(1)} s</td><td>${e.kind}</td><td>${esc(e.detail)}</td></tr>`,
  );
  return `<h2>Chaos schedule (seed ${seed})</h2><table><tr><th>at</th><th>fault</th><th>detail</th></tr>${rows.join('')}</table>`;
}

/** What a suite puts into the shared page: its words, its figures and its own sections. */
export interface ReportPage {
  /** The page title's start (the report's date follows) and its heading. */
  title: string;
  heading: string;
  generatedAt: string;
  ok: boolean;
  /** The line under the verdict: what ran (HTML). */
  summary: string;
  problems: readonly string[];
  problemsHeading: string;
  /** Said (HTML) when there is no problem. */
  noProblems: string;
  metadata: RunMetadata;
  cost: CostTotal;
  comparison: Comparison | undefined;
  figuresHeading: string;
  figureTable: string;
  charts: readonly string[];
  /** The suite's per-phase sections (slices, tasks) under their heading. */
  sectionsHeading: string;
  sections: readonly string[];
  /** The chaos phase's schedule, when there was one. */
  chaos: { events: readonly ChaosEvent[]; seed: number } | undefined;
  trialTable: readonly TrialRow[];
  /** Sections after the trial table (the τ² transcripts). */
  after: readonly string[];
}

export function reportPageHtml(p: ReportPage): string {
  const problems = p.problems.map((x) => `<li>${esc(x)}</li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${p.title} ${esc(p.generatedAt)}</title>
${REPORT_STYLE}</head><body>
<h1>${p.heading}</h1>
${verdictHtml(p.ok)}
<p>${p.summary}</p>
${problems ? `<h2>${p.problemsHeading}</h2><ul class="bad">${problems}</ul>` : p.noProblems}
${metadataHtml(p.metadata, p.cost)}
${comparisonHtml(p.comparison)}
<h2>${p.figuresHeading}</h2>
<p>Rates are shown ± their standard error, sqrt(p(1-p)/n).</p>
${p.figureTable}
<div class="charts">${p.charts.join('\n')}</div>
<h2>${p.sectionsHeading}</h2>
${p.sections.join('\n')}
${p.chaos ? chaosScheduleHtml(p.chaos.events, p.chaos.seed) : ''}
${trialTableHtml(p.trialTable, p.metadata.web_ui.note, isScripted(p.metadata))}${p.after.map((s) => `\n${s}`).join('')}
</body></html>
`;
}
