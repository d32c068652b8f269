// A trial's transcript (transcript.ts) in report.html: one row per entry, who and what, ending with
// the run's stop reason. Everything in it is what a model, a customer, a person or a tool wrote, so
// every text goes through esc().
import { esc } from './html-escape';
import type { TranscriptEntry } from './transcript';

const call = (tool: string, args: unknown) => `<code>${esc(tool)}(${esc(JSON.stringify(args ?? {}))})</code>`;

function entryRow(e: TranscriptEntry): string {
  const row = (who: string, what: string) => `<tr><td>${who}</td><td>${what}</td></tr>`;
  if (e.from === 'task') return row('task', esc(e.text));
  if (e.from === 'customer')
    return row('customer', `${esc(e.text)}${e.end ? ' <em>(ends the conversation)</em>' : ''}`);
  if (e.from === 'tool')
    return row(
      `tool call ${e.step}`,
      `${call(e.tool, e.args)} → ${e.ok ? '' : '<span class="bad">error</span> '}<code>${esc(e.result)}</code>`,
    );
  if (e.from === 'person') {
    const by = e.operator ? ` (${esc(e.operator)})` : '';
    const asked = e.asked === 'tool_call' && e.tool ? ` ${call(e.tool, e.args)}` : ' the escalation';
    const said = e.text ? `: ${esc(e.text)}` : '';
    return row(`person${by}`, `<strong>${esc(e.decision)}</strong>${asked}${said}`);
  }
  if ('not_run' in e)
    return row(
      'agent (call not run)',
      `${call(e.call.tool, e.call.args)} → <span class="bad">${esc(e.not_run)}</span>`,
    );
  if ('final' in e) return row('agent (final)', esc(e.final));
  if ('escalate' in e) return row('agent (escalates)', esc(e.escalate));
  return e.consent
    ? row('agent (consent)', `${esc(e.text)} ${call(e.consent.tool, e.consent.args)}`)
    : row('agent', esc(e.text));
}

/** The transcript as a table, its last row the stop reason. `id`: the anchor a link can point at. */
export function transcriptHtml(
  id: string,
  entries: readonly TranscriptEntry[],
  stopReason: string | null,
  open: boolean,
): string {
  const rows = entries.map(entryRow).join('');
  const stop = `<tr><td>run</td><td>stopped: <code>${esc(stopReason ?? 'no stop reason')}</code></td></tr>`;
  return `<details class="transcript" id="${esc(id)}"${open ? ' open' : ''}><summary>transcript: ${entries.length} entries</summary><table class="transcript">${rows}${stop}</table></details>`;
}
