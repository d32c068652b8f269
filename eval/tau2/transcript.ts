// A τ² trial's whole conversation as `tau2 view` shows a simulation: the customer's turns, the
// agent's messages, the consent questions and their answers, every tool call with its arguments and
// result, and the final answer, in the order they happened. Read from the run's result (its
// transcript and its history), with the fields a tool marked sensitive redacted as for the model.
import type { Turn } from '../../common/conversation/conversation';
import { redactPaths } from '../../common/tools/redact';
import type { AgentResult } from '../../common/types';

export type TranscriptEntry =
  | { n: number; from: 'customer'; text: string; end?: true }
  | { n: number; from: 'agent'; text: string; consent?: { tool: string; args: unknown } }
  | { step: number; from: 'tool'; tool: string; args: unknown; ok: boolean; result: string }
  | { step: number; from: 'agent'; final: string }
  | { step: number; from: 'agent'; escalate: string };

/** Characters of one tool result kept in the report (a record is a few hundred). */
export const RESULT_CHARS = 2000;

export function transcriptOf(result: Pick<AgentResult, 'history' | 'conversation'>): TranscriptEntry[] {
  const turns: readonly Turn[] = result.conversation?.turns ?? [];
  // A turn belongs before the step it was written at: the customer writes while the run waits at
  // that step, a consent question and its answer come before the write's result.
  const items: Array<{ step: number; rank: number; entry: TranscriptEntry }> = turns.map((t) => ({
    step: t.step,
    rank: t.n,
    entry:
      t.from === 'customer'
        ? { n: t.n, from: 'customer', text: t.text, ...(t.end ? { end: true as const } : {}) }
        : {
            n: t.n,
            from: 'agent',
            text: t.text,
            ...(t.consent ? { consent: { tool: t.consent.tool, args: t.consent.args } } : {}),
          },
  }));
  for (const h of result.history) {
    const a = h.action;
    const at = { step: h.step, rank: Number.MAX_SAFE_INTEGER };
    if (a.kind === 'tool') {
      const data = redactPaths(h.observation.data, h.observation.sensitive ?? []).data;
      const text = JSON.stringify(data) ?? 'null';
      items.push({
        ...at,
        entry: {
          step: h.step,
          from: 'tool',
          tool: a.name,
          args: a.args,
          ok: h.observation.ok,
          result: text.length > RESULT_CHARS ? `${text.slice(0, RESULT_CHARS)}…` : text,
        },
      });
    } else if (a.kind === 'final') items.push({ ...at, entry: { step: h.step, from: 'agent', final: a.answer } });
    else if (a.kind === 'escalate') items.push({ ...at, entry: { step: h.step, from: 'agent', escalate: a.reason } });
    // A message is the agent's turn already listed.
  }
  return items.sort((x, y) => x.step - y.step || x.rank - y.rank).map((i) => i.entry);
}
