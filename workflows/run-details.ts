// What a run says about itself: the state query's answer (with `waiting_for` in words) and the Web
// UI's current details. Pure.
import type { PendingApproval } from '../common/approvals';
import { remaining } from '../common/budget';
import type { Budget, Usage } from '../common/budget';
import type { BudgetExtension } from '../common/extend';
import type { AgentResult, AgentState, ConversationState, Phase } from '../common/types';
import type { LoopState } from './run-loop';

/** The Web UI's current details for a phase: the step, what it does, and the money. */
export function phaseDetails(phase: Phase, tool: string | undefined, usage: Usage, budget: Budget): string {
  const what =
    phase === 'calling_tool'
      ? `calling ${tool}`
      : phase === 'awaiting_approval'
        ? `awaiting approval of ${tool}`
        : phase === 'reconciling'
          ? `reconciling ${tool} by idempotency key`
          : phase === 'awaiting_topup'
            ? `waiting for a top-up (agent extend): ${tool}`
            : phase === 'awaiting_customer'
              ? "waiting for the customer's reply"
              : phase;
  return `step ${usage.steps}/${budget.max_steps}: ${what}${costDetails(usage, budget)}`;
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
    ...(v.extensions.length > 0 ? { extensions: [...v.extensions] } : {}),
    ...(v.conversation ? { conversation: v.conversation } : {}),
  };
}

function until(iso: string | undefined): string {
  return iso ? `, until ${iso}` : '';
}
