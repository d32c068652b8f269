// Human-readable output of the CLI and the demo. Pure functions from data to lines, so commands
// stay short and the wording is the same everywhere. (--json output bypasses all of this.) Every
// line is terminal-safe: answers, actions, tool names and stop reasons come from the model.
import { stopReasonDescription } from '../common/stop-reasons';
import type { Budget, Usage } from '../common/cost/budget';
import type { Action } from '../common/contract';
import type { StopReason } from '../common/stop-reasons';
import type { AgentResult, AgentState, ConversationState, TraceEntry } from '../common/types';
import type { BudgetExtension } from '../common/cost/extend';
import type { ClaimText } from '../common/validator/final-validator';
import { formatPending } from './format-approval';
import { formatEffects } from './format-effects';
import { terminalSafe } from './terminal-text';

/** The top-ups a run was granted, one line each, with who and why. */
export function formatExtensions(extensions: readonly BudgetExtension[] | undefined): string[] {
  return (extensions ?? []).map((e) => {
    const amounts = [
      e.usd ? formatUsd(e.usd) : '',
      e.steps ? plural(e.steps, 'step') : '',
      e.tool_calls ? plural(e.tool_calls, 'tool call') : '',
      e.seconds ? `${e.seconds} s` : '',
      e.tokens ? `${e.tokens} tokens` : '',
    ].filter(Boolean);
    return terminalSafe(
      `top-up:       +${amounts.join(', +')} at step ${e.step} by ${e.operator ?? '?'}: ${JSON.stringify(e.reason)}`,
    );
  });
}

/** One finished step of the trace: "step 2: get_user_billing (feaa769a39ae) ok". */
export function formatTraceEntry(entry: TraceEntry): string {
  const outcome = entry.unsupported_claims
    ? `refused by the final validator (${claimList(entry.unsupported_claims)})${entry.stop_reason ? `: stopped: ${entry.stop_reason}` : ''}`
    : entry.approval === 'reject' && !entry.stop_reason
      ? 'rejected by operator'
      : entry.ok
        ? `ok${entry.approval ? ` (${entry.approval === 'approve' ? 'approved' : 'answered'} by operator)` : ''}${entry.repeat_of !== undefined ? ` (a repeat of step ${entry.repeat_of}: answered from it, the tool not called)` : ''}`
        : entry.consent && !entry.stop_reason
          ? entry.consent === 'declined'
            ? 'declined by the customer (not made)'
            : 'not asked: the action could not be shown to the customer whole (not made)'
          : `stopped: ${entry.stop_reason ?? 'failed'}`;
  const windDown = entry.wind_down ? ` [wind-down: ${entry.wind_down}]` : '';
  return terminalSafe(`step ${entry.step}: ${entry.tool} (${entry.args_hash}) ${outcome}${windDown}`);
}

/** What a running step is doing right now: "step 3: deciding", "step 3: calling search_policy". */
export function formatPhase(state: Pick<AgentState, 'phase' | 'step' | 'current_tool'>): string | undefined {
  const phase = phaseText(state);
  return phase === undefined ? undefined : terminalSafe(phase);
}

function phaseText(state: Pick<AgentState, 'phase' | 'step' | 'current_tool'>): string | undefined {
  if (state.phase === 'deciding') return `step ${state.step}: deciding`;
  if (state.phase === 'calling_tool') return `step ${state.step}: calling ${state.current_tool ?? 'a tool'}`;
  if (state.phase === 'awaiting_topup') return `step ${state.step}: awaiting a top-up (see \`agent status\`)`;
  if (state.phase === 'awaiting_customer') return `step ${state.step}: awaiting the customer's reply`;
  if (state.phase === 'awaiting_approval')
    return `step ${state.step}: awaiting approval of ${state.current_tool ?? 'a call'} (see \`agent status\`)`;
  return undefined;
}

/** One line saying what a stop reason means (common/stop-reasons.ts holds every description). */
export function describeStopReason(reason: StopReason | string): string {
  return terminalSafe(stopReasonDescription(reason));
}

export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export function formatUsage(usage: Usage): string {
  const failed = (usage.attempts ?? []).filter((a) => a.outcome === 'failed').length;
  return (
    `${plural(usage.steps, 'step')}, ${plural(usage.tool_calls, 'tool call')}, ${plural(usage.llm_calls, 'LLM call')}, ` +
    `${usage.total_tokens} tokens (${usage.prompt_tokens} prompt${cachedNote(usage)} + ${usage.completion_tokens} completion), ${formatSeconds(usage.elapsed_ms)}` +
    (usage.cost_unknown
      ? ', cost unknown (the worker has no price for its model)'
      : usage.cost_usd !== undefined
        ? `, ${formatUsd(usage.cost_usd)}${failed > 0 ? ` (${plural(failed, 'failed attempt')} charged)` : ''}`
        : '')
  );
}

/** "$0.001234": dollars with enough digits for the cost of a few tokens. */
/** The prompt tokens the provider served from its cache (charged at the cached price), when there were some. */
function cachedNote(usage: Usage): string {
  return usage.cached_prompt_tokens ? `, ${usage.cached_prompt_tokens} of them cached` : '';
}

export function formatUsd(usd: number): string {
  return `$${usd < 0.01 && usd > 0 ? usd.toFixed(6) : usd.toFixed(4)}`;
}

export function formatBudget(budget: Budget): string {
  const tokens = budget.max_tokens > 0 ? `${budget.max_tokens} tokens` : 'tokens unlimited';
  const usd = (budget.max_usd ?? 0) > 0 ? `, ${formatUsd(budget.max_usd)}` : '';
  return `${plural(budget.max_steps, 'step')}, ${plural(budget.max_tool_calls, 'tool call')}, ${budget.max_seconds} s, ${tokens}${usd}`;
}

/** The block `run --wait`, `result`, `watch` and the demo print when a run has ended. */
export function formatResult(result: AgentResult): string[] {
  const lines = [`result: ${result.status} (${result.stop_reason})`];
  if (result.answer !== undefined) lines.push(`answer: ${result.answer}`);
  else lines.push(`reason: ${describeStopReason(result.stop_reason)}`);
  if (result.raw_action !== undefined) lines.push(`raw action: ${oneLine(result.raw_action, 300)}`);
  if (result.wind_down)
    lines.push(
      `wound down: at step ${result.wind_down.step}, ${result.wind_down.reason} could not pay for another tool step`,
    );
  const validation = result.validation;
  if (validation && (validation.verdict === 'unsupported' || validation.bounces > 0)) {
    const claims = validation.unsupported_claims ? `; unsupported: ${claimList(validation.unsupported_claims)}` : '';
    lines.push(
      `final validator (${validation.mode}): ${validation.verdict}, ${plural(validation.bounces, 'answer')} returned${claims}`,
    );
  }
  const c = result.conversation;
  if (c)
    lines.push(
      `conversation: ${plural(c.total, 'turn')} (${c.agent_messages} from the agent, ${c.customer_messages} from the customer)`,
    );
  lines.push(`usage:  ${formatUsage(result.usage)}`);
  lines.push(`budget: ${formatBudget(result.budget)}`);
  lines.push(...formatExtensions(result.extensions));
  lines.push(...formatEffects(result.effects));
  return lines.map(terminalSafe);
}

/** "USD 59.00 (amount), Enterprise plan (plan)", bounded: the claims are the model's text. */
function claimList(claims: readonly ClaimText[]): string {
  return oneLine(claims.map((c) => `${c.text} (${c.kind})`).join(', '), 200);
}

export function formatAction(action: Action): string {
  if (action.kind === 'final') return terminalSafe(`final ${oneLine(action.answer, 120)}`);
  if (action.kind === 'escalate') return terminalSafe(`escalate ${oneLine(action.reason, 120)}`);
  if (action.kind === 'message') return terminalSafe(`message ${oneLine(action.text, 120)}`);
  return terminalSafe(`tool ${action.name} ${oneLine(action.args, 120)}`);
}

/** The live part of `status`: what the `state` query says. */
export function formatState(state: AgentState, workflowId?: string): string[] {
  const { usage, budget, remaining } = state;
  const phase =
    state.phase === 'calling_tool' && state.current_tool ? `calling_tool (${state.current_tool})` : state.phase;
  const lines = [
    `phase:        ${phase}`,
    `status:       ${state.status}${state.stop_reason ? ` (${state.stop_reason})` : ''}`,
    `step:         ${state.step} of ${budget.max_steps} (${remaining.steps} left)`,
    `tool calls:   ${usage.tool_calls} of ${budget.max_tool_calls} (${remaining.tool_calls} left)`,
    `time:         ${formatSeconds(usage.elapsed_ms)} of ${budget.max_seconds} s (${remaining.seconds.toFixed(1)} s left)`,
    `tokens:       ${usage.total_tokens}` +
      (remaining.tokens === null ? ' (no token budget)' : ` of ${budget.max_tokens} (${remaining.tokens} left)`) +
      `, ${plural(usage.llm_calls, 'LLM call')}` +
      (usage.cached_prompt_tokens ? `, ${usage.cached_prompt_tokens} prompt tokens cached` : ''),
    `cost:         ${usage.cost_unknown ? 'unknown (the worker has no price for its model)' : formatUsd(usage.cost_usd ?? 0)}` +
      (remaining.usd === null || remaining.usd === undefined
        ? ' (no dollar budget)'
        : ` of ${formatUsd(budget.max_usd)} (${formatUsd(remaining.usd)} left)`) +
      (usage.charged_attempts !== undefined ? `, ${plural(usage.charged_attempts, 'attempt')} charged` : ''),
    `last action:  ${state.last_action ? formatAction(state.last_action) : '-'}`,
  ];
  if (state.awaiting_approval) lines.push(...formatPending(state.awaiting_approval, workflowId));
  if (state.awaiting_topup)
    lines.push(
      `awaiting:     a top-up (${state.awaiting_topup.reason}) until ${state.awaiting_topup.expires_at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}`,
      `  top up:     agent extend ${workflowId ?? 'ID'} [--usd USD] [--steps N] [--tool-calls N] [--seconds N] --reason TEXT`,
    );
  if (state.conversation) lines.push(...formatConversation(state.conversation, workflowId));
  lines.push(...formatExtensions(state.extensions));
  if (state.trace.length > 0) {
    lines.push('trace:');
    for (const entry of state.trace) lines.push(`  ${formatTraceEntry(entry)}`);
  }
  lines.push(...formatEffects(state.effects));
  return lines.map(terminalSafe);
}

/** A conversation in `status`: its counts, the agent's last message, and the wait for the customer. */
function formatConversation(c: ConversationState, workflowId: string | undefined): string[] {
  const lines = [
    `conversation: ${plural(c.total, 'turn')} (${c.agent_messages} from the agent, ${c.customer_messages} from the customer)` +
      (c.ended ? ', ended by the customer' : c.unanswered > 0 ? `, ${c.unanswered} unanswered` : ''),
  ];
  // A consent question is shown whole (it names the exact action the customer is asked about).
  if (c.last_message?.consent) lines.push(`  agent asks:  ${c.last_message.text}`);
  else if (c.last_message) lines.push(`  agent said: ${oneLine(c.last_message.text, 200)}`);
  if (c.idle_expires_at)
    lines.push(
      `awaiting:     the customer's reply until ${c.idle_expires_at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}`,
      `  reply:      agent say ${workflowId ?? 'ID'} TEXT [--end]`,
    );
  return lines;
}

export function formatTime(date: Date | undefined): string {
  if (!date) return '-';
  return date
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** Left-aligned columns with a header row. */
export function formatTable(header: string[], rows: string[][]): string[] {
  // A cell is one line: a newline or tab from a model-chosen value would break the columns.
  const cells = rows.map((r) => r.map((cell) => terminalSafe(cell).replace(/[\n\t]/g, ' ')));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const render = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [render(header), ...cells.map(render)];
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Compact single-line JSON (or the string itself), cut to max characters. */
function oneLine(value: unknown, max: number): string {
  let text: string;
  if (typeof value === 'string') text = JSON.stringify(value);
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  text = text.replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
