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
import type { AgentResult, HistoryEntry } from '../../common/types';
import { scrubSecrets } from '../../activities/secrets';

export type TranscriptEntry =
  | { step: 0; from: 'task'; text: string }
  | { n: number; from: 'customer'; text: string; end?: true }
  | { n: number; from: 'agent'; text: string; consent?: { tool: string; args: unknown } }
  | { step: number; from: 'tool'; tool: string; args: unknown; ok: boolean; result: string }
  /** A call the model asked for that never ran: why (the run's stop reason at it, a person's or customer's no). */
  | { step: number; from: 'agent'; call: { tool: string; args: unknown }; not_run: string }
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
  /** The tool calls the model asked for, from the run's decisions: one that never ran shows with why. */
  asked?: ReadonlyArray<{ step: number; tool?: string; args?: unknown }>;
}

// Where each kind of entry goes within its step: turns first (by number), then a person's answer to
// a call's approval, then the step's action and result, then a person's answer to an escalation.
const RANK_APPROVAL = 1e15;
const RANK_ACTION = 2e15;
const RANK_ESCALATION_ANSWER = 3e15;

type RunResult =
  (Pick<AgentResult, 'history' | 'conversation'> & Partial<Pick<AgentResult, 'trace' | 'answer'>>) | undefined;
type Item = { step: number; rank: number; entry: TranscriptEntry };

/** Masks the secrets in a text, and in any value through its JSON. */
interface Scrubber {
  text(text: string): string;
  value(value: unknown): unknown;
}

function scrubber(secrets: readonly string[]): Scrubber {
  const text = (t: string) => scrubSecrets(t, secrets);
  return {
    text,
    value(value) {
      const json = JSON.stringify(value);
      if (json === undefined) return value;
      const clean = text(json);
      if (clean === json) return value;
      try {
        return JSON.parse(clean) as unknown;
      } catch {
        return clean;
      }
    },
  };
}

export function transcriptOf(result: RunResult, ctx: TranscriptContext = {}): TranscriptEntry[] {
  const scrub = scrubber(ctx.secrets ?? []);
  const items: Item[] = [];
  if (ctx.goal !== undefined && !result?.conversation)
    items.push({ step: -1, rank: 0, entry: { step: 0, from: 'task', text: scrub.text(ctx.goal) } });
  items.push(...turnItems(result?.conversation?.turns ?? [], scrub));
  items.push(...approvalItems(ctx.approvals ?? [], scrub));
  items.push(...historyItems(result?.history ?? [], ctx.registry, scrub));
  items.push(...notRunItems(result, ctx.asked ?? [], scrub));
  items.push(...answerItem(result, items, scrub));
  return items.sort((x, y) => x.step - y.step || x.rank - y.rank).map((i) => i.entry);
}

/** A turn belongs before the step it was written at: the customer writes while the run waits at that step, a consent question and its answer come before the write's result. */
function turnItems(turns: readonly Turn[], scrub: Scrubber): Item[] {
  return turns.map((t) => ({
    step: t.step,
    rank: t.n,
    entry:
      t.from === 'customer'
        ? { n: t.n, from: 'customer', text: scrub.text(t.text), ...(t.end ? { end: true as const } : {}) }
        : {
            n: t.n,
            from: 'agent',
            text: scrub.text(t.text),
            ...(t.consent ? { consent: { tool: t.consent.tool, args: scrub.value(t.consent.args) } } : {}),
          },
  }));
}

function approvalItems(entries: readonly StepEntry[], scrub: Scrubber): Item[] {
  return entries.flatMap((a): Item[] => {
    if (a.kind !== 'approval') return [];
    const { pending, decision } = a.receipt;
    const text = a.answer?.text ?? a.answer?.reason;
    return [
      {
        step: pending.step,
        rank: pending.kind === 'escalation' ? RANK_ESCALATION_ANSWER : RANK_APPROVAL,
        entry: {
          step: pending.step,
          from: 'person',
          asked: pending.kind,
          ...(pending.tool !== undefined ? { tool: pending.tool, args: scrub.value(pending.args ?? {}) } : {}),
          decision,
          ...(text !== undefined ? { text: scrub.text(text) } : {}),
          ...(a.answer?.operator ? { operator: scrub.text(a.answer.operator) } : {}),
        },
      },
    ];
  });
}

/** Each step's action: a call with its result redacted as the model reads it, the final answer, an escalation. */
function historyItems(history: readonly HistoryEntry[], registry: ToolRegistry | undefined, scrub: Scrubber): Item[] {
  return history.flatMap((h): Item[] => {
    const a = h.action;
    const at = { step: h.step, rank: RANK_ACTION };
    if (a.kind === 'tool') {
      const paths = registry ? sensitivePaths(h.observation, registry) : (h.observation.sensitive ?? []);
      const text = scrub.text(JSON.stringify(redactPaths(h.observation.data, paths).data) ?? 'null');
      const result = text.length > RESULT_CHARS ? `${text.slice(0, RESULT_CHARS)}…` : text;
      return [
        {
          ...at,
          entry: { step: h.step, from: 'tool', tool: a.name, args: scrub.value(a.args), ok: h.observation.ok, result },
        },
      ];
    }
    if (a.kind === 'final') return [{ ...at, entry: { step: h.step, from: 'agent', final: scrub.text(a.answer) } }];
    if (a.kind === 'escalate')
      return [{ ...at, entry: { step: h.step, from: 'agent', escalate: scrub.text(a.reason) } }];
    return []; // A message is the agent's turn already listed.
  });
}

/** A one-shot run's answer, last, when no history entry holds it (an accepted final answer ends the run without one). */
function answerItem(result: RunResult, items: readonly Item[], scrub: Scrubber): Item[] {
  if (
    result?.answer === undefined ||
    result.conversation !== undefined || // a conversation's answers are the agent's turns, already listed
    items.some((i) => 'final' in i.entry && i.entry.final === scrub.text(result.answer!))
  )
    return [];
  const steps = [...items.map((i) => i.step), ...(result.trace ?? []).map((t) => t.step)];
  const step = Math.max(0, ...steps);
  return [{ step, rank: RANK_ESCALATION_ANSWER + 1, entry: { step, from: 'agent', final: scrub.text(result.answer) } }];
}

/** The calls the model asked for that left no history entry (denied, declined, cut off), with why. */
function notRunItems(result: RunResult, asked: NonNullable<TranscriptContext['asked']>, scrub: Scrubber): Item[] {
  const ran = new Set((result?.history ?? []).map((h) => h.step));
  const items: Item[] = [];
  for (const a of asked) {
    if (a.tool === undefined || ran.has(a.step)) continue;
    ran.add(a.step);
    const trace = result?.trace?.find((t) => t.step === a.step);
    const why =
      trace?.stop_reason ??
      (trace?.consent ? `consent ${trace.consent}` : trace?.approval === 'reject' ? 'rejected by a person' : 'not run');
    items.push({
      step: a.step,
      rank: RANK_ACTION,
      entry: {
        step: a.step,
        from: 'agent',
        call: { tool: a.tool, args: scrub.value(a.args ?? {}) },
        not_run: scrub.text(why),
      },
    });
  }
  return items;
}
