// The frame of every suite's report.html: the look, the verdict, the bar charts (inline SVG,
// baseline beside chaos), the pass^k rows and the chaos schedule. The suites fill it with their figures.
import type { ChaosEvent } from './chaos';
import { esc } from './html-escape';
import type { PhaseName } from './phases';

export const COLORS: Record<PhaseName, string> = { baseline: '#3b6ea8', chaos: '#c0562f' };

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

export function barChartHtml(c: BarChart): string {
  const width = 300;
  const bars = c.phases
    .map((p, i) => {
      const v = c.value(p);
      const w = v === null || v === undefined ? 0 : Math.max(1, (v / c.max) * (width - 160));
      const y = 6 + i * 26;
      return `<text x="0" y="${y + 14}" font-size="12">${p}</text><rect x="62" y="${y}" width="${w.toFixed(1)}" height="18" fill="${COLORS[p]}"/><text x="${(66 + w).toFixed(1)}" y="${y + 14}" font-size="12">${esc(c.text(p))}</text>`;
    })
    .join('');
  const height = 10 + c.phases.length * 26;
  return `<div class="chart"><h4><code>${esc(c.name)}</code></h4><svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="${esc(c.name)}">${bars}</svg><p>${esc(c.meaning)}</p></div>`;
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
