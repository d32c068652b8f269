// The parts of report.html every suite shares: the run's metadata, the comparison with a previous
// report, and the table of every trial, each row opening onto its trajectory (a details element
// with the row's anchor, so a link can point at one trial).
import type { Comparison } from './compare';
import { changeText } from './compare';
import { esc } from './html-escape';
import type { RunMetadata } from './run-metadata';
import type { CostTotal, TrialRow } from './trial-table';
import { formatCost, formatTotalCost, transcriptId } from './trial-table';
import { transcriptHtml } from './transcript-html';

/** How much of an answer the table's cell shows (the drill-down shows all of it). */
const ANSWER_PREVIEW_CHARS = 120;

export function metadataHtml(m: RunMetadata, cost: CostTotal): string {
  const rows: Array<[string, string]> = [
    ['suite', m.suite],
    ['date', m.date],
    // A scripted model's name says what it is; a live one's the kind of endpoint it was reached at.
    ['model', m.base_url_kind === 'scripted' ? m.model : `${m.model} (${m.base_url_kind})`],
    ['commit', m.commit ?? 'unknown (the build recorded none)'],
    ['prompt version', m.prompt_version],
    ['contract version', m.contract_version],
    ['seed', String(m.seed)],
    [
      'Temporal server',
      `${m.server.address} namespace ${m.server.namespace}${m.server.own ? " (the eval's own, ended with it)" : ''}`,
    ],
    ['Web UI', m.web_ui.note],
    ['cost', formatTotalCost(cost)],
  ];
  return `<h2>Run</h2><table class="meta">${rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join('')}</table>`;
}

export function comparisonHtml(c: Comparison | undefined): string {
  if (!c) return '';
  const list = (title: string, cls: string, xs: Comparison['regressions']) =>
    xs.length === 0
      ? `<p>${esc(title)}: none.</p>`
      : `<h3>${esc(title)}</h3><ul class="${cls}">${xs.map((x) => `<li>${esc(changeText(x))}</li>`).join('')}</ul>`;
  const unmatched =
    c.only_before.length || c.only_now.length
      ? `<p>Not compared (in one report only): ${esc([...c.only_before.map((k) => `${k} (before)`), ...c.only_now.map((k) => `${k} (now)`)].join(', '))}.</p>`
      : '';
  return `<h2>Compared with a previous report</h2>
<p><code>${esc(c.against.file)}</code> · ${esc(c.against.date)} · commit ${esc(c.against.commit ?? 'unknown')} · ${esc(c.against.model)}. A regression: a scenario that passed every trial before and fails one now, or a rate that moved the wrong way by more than the standard error of the difference.</p>
${list('Regressions', 'bad', c.regressions)}
${list('Improvements', 'ok', c.improvements)}
${unmatched}`;
}

/** `scripted`: the runs' model was the scripted one (no cost, said so). */
export function trialTableHtml(rows: readonly TrialRow[], webUiNote: string, scripted = false): string {
  const head =
    '<tr><th>phase</th><th>scenario</th><th>trial</th><th>pass</th><th>stop reason</th><th>steps</th><th>tokens</th><th>cost</th><th>latency</th><th>answer</th><th>run</th></tr>';
  const body = rows.map((r) => trialRowHtml(r, scripted)).join('\n');
  return `<h2>Trials</h2><p>${esc(webUiNote)}. Each row opens onto the trial's steps and its whole transcript.</p><table class="trials">${head}\n${body}</table>`;
}

function trialRowHtml(r: TrialRow, scripted: boolean): string {
  const answer = r.answer ?? '';
  const preview = answer.length > ANSWER_PREVIEW_CHARS ? `${answer.slice(0, ANSWER_PREVIEW_CHARS)}…` : answer;
  const run = r.url ? `<a href="${esc(r.url)}">${esc(r.workflow_id)}</a>` : `<code>${esc(r.workflow_id)}</code>`;
  const cells = [
    esc(r.phase),
    `<a href="#${esc(r.id)}">${esc(r.scenario)}</a>`,
    String(r.trial),
    r.passed ? '<span class="ok">pass</span>' : '<span class="bad">FAIL</span>',
    esc(r.stop_reason ?? 'no stop reason'),
    String(r.steps),
    String(r.tokens),
    esc(formatCost(r.cost_usd, scripted)),
    r.latency_ms === null ? '-' : `${Math.round(r.latency_ms)} ms`,
    esc(preview),
    run,
  ];
  const problems = r.problems.length
    ? `<ul class="bad">${r.problems.map((p) => `<li>${esc(p)}</li>`).join('')}</ul>`
    : '';
  const answerFull = answer.length > ANSWER_PREVIEW_CHARS ? `<p>answer: ${esc(answer)}</p>` : '';
  const steps = r.trajectory
    .map(
      (s) =>
        `<tr><td>${s.step}</td><td>${esc(s.decision)}</td><td>${esc(s.tool ?? '')}</td><td>${esc(s.summary)}</td><td>${esc(s.observation ?? '')}</td><td>${esc(s.stop_reason ?? '')}</td></tr>`,
    )
    .join('');
  const drill = `<details id="${esc(r.id)}"${r.passed ? '' : ' open'}><summary>${r.trajectory.length} steps of ${esc(r.scenario)} #${r.trial}</summary>${problems}${answerFull}<table><tr><th>step</th><th>decision</th><th>tool</th><th>summary</th><th>observation</th><th>stop</th></tr>${steps}</table>${transcriptHtml(transcriptId(r), r.transcript, r.stop_reason, !r.passed)}</details>`;
  return `<tr class="${r.passed ? 'pass' : 'fail'}">${cells.map((c) => `<td>${c}</td>`).join('')}</tr><tr class="steps"><td colspan="${cells.length}">${drill}</td></tr>`;
}
