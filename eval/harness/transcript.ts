// A trial's whole run as `tau2 view` shows a simulation, for both suites' reports: the task the run
// got (a run without a conversation), the customer's turns, the agent's messages, the consent
// questions and their answers, every tool call with its arguments and result, a person's answers
// to approvals and escalations, and the final answer, in the order they happened. Read from the
// run's result (its turns and history) and its workflow history (the approvals). What it shows is
// redacted as the model's view is (the fields a tool's spec or observation marks sensitive), and
// any secret of the eval's environment is masked.
import type { StepEntry } from '../../client/history/read-history';
import type { ApprovalDecision } from '../../common/conversation/approvals';
import type { Turn } from '../../common/conversation/conversation';
import type { ToolRegistry } from '../../common/tools/index';
import { redactPaths, sensitivePaths } from '../../common/tools/redact';
import type { AgentResult } from '../../common/types';
import { scrubSecrets } from '../../activities/secrets';

export type TranscriptEntry =
  | { step: 0; from: 'task'; text: string }
  | { n: number; from: 'customer'; text: string; end?: true }
  | { n: number; from: 'agent'; text: string; consent?: { tool: string; args: unknown } }
  | { step: number; from: 'tool'; tool: string; args: unknown; ok: boolean; result: string }
  | { step: number; from: 'agent'; final: string }
  | { step: number; from: 'agent'; escalate: string }
  | {
      step: number;
      from: 'person';
      /** What was asked: a tool call to approve, or an escalation to answer. */
      asked: 'tool_call' | 'escalation';
      tool?: string;
      args?: unknown;
      decision: ApprovalDecision;
      /** The person's reply to an escalation, or why they rejected. */
      text?: string;
      operator?: string;
    };

/** Characters of one tool result kept in the report (a record is a few hundred). */
export const RESULT_CHARS = 2000;

export type ApprovalEntry = Extract<StepEntry, { kind: 'approval' }>;

export interface TranscriptContext {
  /** The task as the run got it: shown first in a run without a conversation (the customer's turns open one). */
  goal?: string;
  /** A person's answers, from the run's workflow history. */
  approvals?: readonly StepEntry[];
  /** The run's tools: the sensitive fields their specs declare are redacted, as for the model. */
  registry?: ToolRegistry;
  /** Secret values to mask (the eval's environment's). */
  secrets?: readonly string[];
}

// Where each kind of entry goes within its step: turns first (by number), then a person's answer to
// a call's approval, then the step's action and result, then a person's answer to an escalation.
const RANK_APPROVAL = 1e15;
const RANK_ACTION = 2e15;
const RANK_ESCALATION_ANSWER = 3e15;

export function transcriptOf(
  result: Pick<AgentResult, 'history' | 'conversation'> | undefined,
  ctx: TranscriptContext = {},
): TranscriptEntry[] {
  const scrub = (text: string) => scrubSecrets(text, ctx.secrets ?? []);
  const scrubValue = (value: unknown): unknown => {
    const json = JSON.stringify(value);
    if (json === undefined) return value;
    const clean = scrub(json);
    if (clean === json) return value;
    try {
      return JSON.parse(clean) as unknown;
    } catch {
      return clean;
    }
  };
  const turns: readonly Turn[] = result?.conversation?.turns ?? [];
  const items: Array<{ step: number; rank: number; entry: TranscriptEntry }> = [];
  if (ctx.goal !== undefined && !result?.conversation)
    items.push({ step: -1, rank: 0, entry: { step: 0, from: 'task', text: scrub(ctx.goal) } });
  // A turn belongs before the step it was written at: the customer writes while the run waits at
  // that step, a consent question and its answer come before the write's result.
  for (const t of turns)
    items.push({
      step: t.step,
      rank: t.n,
      entry:
        t.from === 'customer'
          ? { n: t.n, from: 'customer', text: scrub(t.text), ...(t.end ? { end: true as const } : {}) }
          : {
              n: t.n,
              from: 'agent',
              text: scrub(t.text),
              ...(t.consent ? { consent: { tool: t.consent.tool, args: scrubValue(t.consent.args) } } : {}),
            },
    });
  for (const a of ctx.approvals ?? []) {
    if (a.kind !== 'approval') continue;
    const { pending, decision } = a.receipt;
    const text = a.answer?.text ?? a.answer?.reason;
    items.push({
      step: pending.step,
      rank: pending.kind === 'escalation' ? RANK_ESCALATION_ANSWER : RANK_APPROVAL,
      entry: {
        step: pending.step,
        from: 'person',
        asked: pending.kind,
        ...(pending.tool !== undefined ? { tool: pending.tool, args: scrubValue(pending.args ?? {}) } : {}),
        decision,
        ...(text !== undefined ? { text: scrub(text) } : {}),
        ...(a.answer?.operator ? { operator: scrub(a.answer.operator) } : {}),
      },
    });
  }
  for (const h of result?.history ?? []) {
    const a = h.action;
    const at = { step: h.step, rank: RANK_ACTION };
    if (a.kind === 'tool') {
      const paths = ctx.registry ? sensitivePaths(h.observation, ctx.registry) : (h.observation.sensitive ?? []);
      const data = redactPaths(h.observation.data, paths).data;
      const text = scrub(JSON.stringify(data) ?? 'null');
      items.push({
        ...at,
        entry: {
          step: h.step,
          from: 'tool',
          tool: a.name,
          args: scrubValue(a.args),
          ok: h.observation.ok,
          result: text.length > RESULT_CHARS ? `${text.slice(0, RESULT_CHARS)}…` : text,
        },
      });
    } else if (a.kind === 'final')
      items.push({ ...at, entry: { step: h.step, from: 'agent', final: scrub(a.answer) } });
    else if (a.kind === 'escalate')
      items.push({ ...at, entry: { step: h.step, from: 'agent', escalate: scrub(a.reason) } });
    // A message is the agent's turn already listed.
  }
  return items.sort((x, y) => x.step - y.step || x.rank - y.rank).map((i) => i.entry);
}
