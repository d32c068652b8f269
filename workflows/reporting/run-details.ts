// What a run says about itself: the state query's answer (with `waiting_for` in words) and the Web
// UI's current details (a conversation's with its last turns). Pure.
import { displaySafe } from '../../common/text/visible-text';
import type { PendingApproval } from '../../common/conversation/approvals';
import { remaining } from '../../common/cost/budget';
import type { Budget, Usage } from '../../common/cost/budget';
import { reportedExtensions } from '../../common/cost/extend';
import type { BudgetExtension } from '../../common/cost/extend';
import { unansweredOf } from '../../common/conversation/conversation';
import type { Transcript, Turn } from '../../common/conversation/conversation';
import type { AgentResult, AgentState, ConversationState, Phase } from '../../common/types';
import type { LoopState } from '../agent/run-loop';

/** What the current details know of a run's phase: where it is, and who it waits for. */
export interface PhaseView {
  phase: Phase;
  tool: string | undefined;
  usage: Usage;
  budget: Budget;
  workflowId: string;
  /** The user the run acts for, once known. */
  principal: string | undefined;
  /** Set while a person is asked: what exactly. */
  pending?: PendingApproval | undefined;
}

/** Characters of model text (an escalation's reason) shown in the current details. */
export const DETAILS_REASON_CHARS = 160;

/**
 * The Web UI's current details for a phase: the step ("step 4 of 8": the UI renders "4/8" as a
 * fraction glyph), what it does or what awaits whom with the command that answers, and the money.
 * Markdown: operator and model text is escaped.
 */
export function phaseDetails(v: PhaseView): string {
  return `step ${v.usage.steps} of ${v.budget.max_steps}: ${phaseWhat(v)}${costDetails(v.usage, v.budget)}`;
}

function phaseWhat(v: PhaseView): string {
  const id = escapeMarkdown(v.workflowId);
  const tool = escapeMarkdown(v.tool ?? '?');
  switch (v.phase) {
    case 'calling_tool':
      return `calling ${tool}`;
    case 'reconciling':
      return `reconciling ${tool} by idempotency key`;
    case 'awaiting_approval':
      return v.pending ? awaitingPerson(v.pending, v.principal, id) : `awaiting approval of ${tool}`;
    case 'awaiting_topup':
      return `awaiting an operator's top-up (${escapeMarkdown(v.tool ?? 'budget spent')}) — agent extend ${id} --reason TEXT`;
    case 'awaiting_customer':
      // The conversation's line below says what exactly (reply, consent), until when, and the command.
      return "awaiting the customer's next message";
    default:
      return v.phase;
  }
}

/** "awaiting approval: issue_refund USD 49.00 for user 42 — agent approve ID | agent reject ID" (markdown). */
function awaitingPerson(p: PendingApproval, principal: string | undefined, id: string): string {
  if (p.kind === 'escalation') {
    const reason = escapeMarkdown(oneLineBounded(p.reason ?? '', DETAILS_REASON_CHARS));
    return `awaiting a person's answer to the escalation ("${reason}") — agent answer ${id} TEXT`;
  }
  return `awaiting approval: ${approvalCall(p, principal, escapeMarkdown)} — agent approve ${id} | agent reject ${id}`;
}

/** "issue_refund USD 49.00 for user 42": the call, its amount, whose. */
function approvalCall(p: PendingApproval, principal: string | undefined, text: (s: string) => string): string {
  const amount = p.amount_usd !== undefined ? ` USD ${p.amount_usd.toFixed(2)}` : '';
  const user = principal !== undefined ? ` for user ${text(principal)}` : '';
  return `${text(p.tool ?? 'a tool call')}${amount}${user}`;
}

/**
 * The approval timer's name (plain text, one line), in the timeline of the run page's default tab:
 * what awaits whom and the command that answers, where the current details are a tab away.
 * No model text: an escalation's reason stays in the details and the state query.
 */
export function approvalTimerSummary(p: PendingApproval, principal: string | undefined, workflowId: string): string {
  const what =
    p.kind === 'escalation'
      ? `the escalation awaits a person's answer — agent answer ${workflowId} TEXT`
      : `${approvalCall(p, principal, (s) => s)} awaits approval — agent approve ${workflowId} | agent reject ${workflowId}`;
  return `approval timeout · step ${p.step}: ${what}`;
}

function oneLineBounded(text: string, max: number): string {
  const chars = Array.from(displaySafe(text).replace(/\s+/g, ' ').trim());
  return chars.length > max ? chars.slice(0, max - 1).join('') + '…' : chars.join('');
}

/** What the Web UI's current details add about money: spent, and of what. */
export function costDetails(usage: Usage, budget: Budget): string {
  const spent = usage.cost_usd ?? 0;
  const max = budget.max_usd;
  return max > 0 ? ` · $${spent.toFixed(4)} of $${max}` : spent > 0 ? ` · $${spent.toFixed(4)}` : '';
}

export interface WaitingOn {
  phase: Phase;
  step: number;
  tool: string | undefined;
  awaiting: { pending: PendingApproval } | undefined;
  topup: { reason: string; expiresMs: number } | undefined;
  conversation?: ConversationState | undefined;
}

/** What the run is waiting for right now, in words; undefined when it waits for nothing. */
export function waitingFor(w: WaitingOn): string | undefined {
  if (w.phase === 'deciding') return `the LLM's decision for step ${w.step}`;
  if (w.phase === 'calling_tool') return `tool ${w.tool ?? '?'} (step ${w.step})`;
  if (w.phase === 'reconciling') return `the refunds service's record of ${w.tool ?? '?'} (step ${w.step})`;
  if (w.phase === 'awaiting_topup' && w.topup)
    return `an operator's top-up (agent extend): ${w.topup.reason}, until ${new Date(w.topup.expiresMs).toISOString()}`;
  if (w.phase === 'awaiting_customer')
    return `the customer's reply to the agent's message (step ${w.step})${until(w.conversation?.idle_expires_at)}`;
  if (w.phase === 'awaiting_approval' && w.awaiting) {
    const { pending } = w.awaiting;
    return pending.kind === 'escalation'
      ? `a person's answer to the escalation (step ${pending.step}, approval id ${pending.id})`
      : `a person's approval of ${pending.tool ?? 'a tool call'} (step ${pending.step}, approval id ${pending.id})`;
  }
  return undefined;
}

export interface RunView {
  phase: Phase;
  tool: string | undefined;
  final: AgentResult | undefined;
  state: LoopState;
  /** The usage now (elapsed time included while the run goes on). */
  usage: Usage;
  budget: Budget;
  awaiting: { pending: PendingApproval } | undefined;
  topup: { reason: string; sinceMs: number; expiresMs: number } | undefined;
  extensions: readonly BudgetExtension[];
  conversation: ConversationState | undefined;
  /** While the run goes on: the workflow's clock now, and whether the agent's time runs (no wait for a person). */
  clock?: { nowMs: number; running: boolean };
}

/** The state query's answer. */
export function stateOf(v: RunView): AgentState {
  const { state, awaiting, topup } = v;
  const step = state.usage.steps;
  return {
    phase: v.phase,
    step,
    status: v.final ? v.final.status : 'running',
    stop_reason: v.final?.stop_reason,
    current_tool: v.tool,
    waiting_for: waitingFor({ phase: v.phase, step, tool: v.tool, awaiting, topup, conversation: v.conversation }),
    last_action: state.lastAction,
    usage: v.usage,
    budget: v.budget,
    remaining: remaining(v.budget, v.usage),
    trace: state.trace,
    ...(awaiting ? { awaiting_approval: awaiting.pending } : {}),
    effects: state.effects,
    ...(topup
      ? {
          awaiting_topup: {
            reason: topup.reason,
            since: new Date(topup.sinceMs).toISOString(),
            expires_at: new Date(topup.expiresMs).toISOString(),
          },
        }
      : {}),
    ...(v.extensions.length > 0 ? { extensions: reportedExtensions(v.extensions) } : {}),
    ...(v.conversation ? { conversation: v.conversation } : {}),
    ...(v.clock && !v.final ? { clock: { at: new Date(v.clock.nowMs).toISOString(), running: v.clock.running } } : {}),
  };
}

function until(iso: string | undefined): string {
  return iso ? `, until ${iso}` : '';
}

/** Bounds of a conversation's turns in the current details (sent with every answer to the UI's metadata query). */
export const TURN_DETAILS_LIMITS = {
  /** The last turns shown. */
  turns: 10,
  /** Characters of one turn's text (a longer one is cut, marked `…`). */
  turn_chars: 300,
  /** UTF-8 bytes of the whole current details. */
  total_bytes: 4096,
} as const;

export interface TurnsView {
  transcript: Transcript;
  workflowId: string;
  /** Set while the run waits for the customer's reply: until when. */
  awaitingUntilMs: number | undefined;
  /** The workflow's clock now (to say a time of today without its date). */
  nowMs: number;
}

/**
 * The current details of a conversation run: the consent question while it awaits its answer (first:
 * the Web UI shows only the top of the details), `head` (the phase or ending line), then the counts
 * and what the run waits for, then the last turns in order, oldest first; within TURN_DETAILS_LIMITS.
 */
export function conversationDetails(head: string, v: TurnsView): string {
  const t = v.transcript;
  const counts = `${t.total} turn(s): ${t.agent_messages} from the agent, ${t.customer_messages} from the customer`;
  const top = [consentAwaited(v), head].filter(Boolean).join('\n\n');
  const heading = `${top ? `${top}\n\n` : ''}**conversation** · ${counts}${conversationWait(v)}`;
  const lines = t.turns.slice(-TURN_DETAILS_LIMITS.turns).map(turnLine);
  // The newest turns matter most: the oldest go first when the whole would be too big.
  for (let from = 0; from <= lines.length; from++) {
    const shown = lines.slice(from);
    const earlier = t.total - shown.length;
    const body = [...(earlier > 0 ? [`_${earlier} earlier turn(s) not shown_`] : []), ...shown].join('\n\n');
    const details = shown.length + earlier > 0 ? `${heading}\n\n${body}` : heading;
    if (utf8Bytes(details) <= TURN_DETAILS_LIMITS.total_bytes) return details;
  }
  return truncateBytes(heading, TURN_DETAILS_LIMITS.total_bytes);
}

function conversationWait(v: TurnsView): string {
  const t = v.transcript;
  if (t.ended) return ' · the customer ended the conversation';
  // A reply that just arrived is news even while the wait has not yet ended.
  const unanswered = unansweredOf(t);
  if (unanswered > 0) return ` · ${unanswered} customer message(s) wait for the agent's reply`;
  if (v.awaitingUntilMs === undefined) return '';
  const until = utcTime(v.awaitingUntilMs, v.nowMs);
  // The question itself, and the command, are the details' first line.
  if (askedConsent(v)) return ` · awaiting the customer's consent (above) until ${until}`;
  return ` · awaiting the customer's reply until ${until} — reply with: agent say ${escapeMarkdown(v.workflowId)} TEXT`;
}

/** The consent question the run awaits the answer to, if any: the agent's last turn, unanswered. */
function askedConsent(v: TurnsView): Turn | undefined {
  const t = v.transcript;
  if (t.ended || v.awaitingUntilMs === undefined || unansweredOf(t) > 0) return undefined;
  const asked = t.turns.at(-1);
  return asked?.from === 'agent' && asked.consent ? asked : undefined;
}

/**
 * "**awaiting the customer's consent:** cancel_pending_order {…} — reply with: agent say ID yes
 * (anything else declines)", the action whole (short by construction: common/conversation/consent.ts).
 */
function consentAwaited(v: TurnsView): string {
  const consent = askedConsent(v)?.consent;
  if (!consent) return '';
  const action = escapeMarkdown(`${consent.tool} ${JSON.stringify(consent.args)}`);
  const id = escapeMarkdown(v.workflowId);
  return `**awaiting the customer's consent:** ${action} — reply with: agent say ${id} yes (anything else declines)`;
}

/** One turn as a markdown paragraph: who, then the text (escaped, on one line, bounded). */
function turnLine(turn: Turn): string {
  if (turn.from === 'customer') {
    const ended = turn.end ? '_(ended the conversation)_' : '';
    return `**customer:** ${[shownText(turn.text), ended].filter(Boolean).join(' ')}`;
  }
  // The action the customer was asked about, whole, never cut: it is asked only when it is short
  // and shows every value as it is (common/conversation/consent.ts), so escaping alone keeps it exact.
  if (turn.consent)
    return `**agent:** _asks to confirm:_ ${escapeMarkdown(`${turn.consent.tool} ${JSON.stringify(turn.consent.args)}`)}`;
  return `**agent:** ${shownText(turn.text)}`;
}

/** Text as the details show it: one line, at most turn_chars characters, no markdown of its own. */
function shownText(text: string): string {
  return escapeMarkdown(oneLineBounded(text, TURN_DETAILS_LIMITS.turn_chars));
}

/** Customer and model text is shown, never rendered: every markdown or HTML character escaped. */
export function escapeMarkdown(text: string): string {
  return displaySafe(text).replace(/[\\`*_{}[\]()<>#+\-.!|~&$:]/g, (c) => `\\${c}`);
}

/** "20:15 UTC" today, "2026-12-04 20:15 UTC" on another day. */
function utcTime(ms: number, nowMs: number): string {
  const iso = new Date(ms).toISOString();
  const day = iso.slice(0, 10);
  return `${day === new Date(nowMs).toISOString().slice(0, 10) ? '' : `${day} `}${iso.slice(11, 16)} UTC`;
}

function utf8Bytes(text: string): number {
  let bytes = 0;
  for (const c of text) {
    const code = c.codePointAt(0)!;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

function truncateBytes(text: string, max: number): string {
  let out = '';
  for (const c of text) {
    if (utf8Bytes(out + c) > max - 3) return out + '…';
    out += c;
  }
  return out;
}
