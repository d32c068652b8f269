// The loop's step decision: given the run's state and what just happened (a step begins, the model
// answered, a person answered, a tool answered or failed), what comes next. Pure and deterministic.
// The workflow (agent.ts) runs it with Temporal around it; the benchmark's in-process baseline
// (bench/baseline.ts) runs the very same code with the activities called directly.
// Waiting, activities, timers, metrics and search attributes stay with the caller.
import { budgetExhausted } from '../../common/cost/budget';
import type { Budget, Usage } from '../../common/cost/budget';
import { validateAction } from '../../common/contract';
import type { EscalateAction, FinalAction, MessageAction, ToolAction } from '../../common/contract';
import { escalationHash, personObservation } from '../../common/conversation/approvals';
import {
  declinedObservation,
  isExplicitYes,
  unshowable,
  unshowableObservation,
} from '../../common/conversation/consent';
import type { ApprovalAnswer, PendingApproval } from '../../common/conversation/approvals';
import type { ToolOutcome } from '../../common/temporal/metrics-sink';
import { policyStop, safeToolName, toolStop } from '../../common/stop-reasons';
import type { StopReason } from '../../common/stop-reasons';
import { loopSignature } from '../../domains/index';
import type { ToolRegistry } from '../../common/tools/tool-catalog';
import type {
  AgentResult,
  DecideOutput,
  FinalValidation,
  HistoryEntry,
  Observation,
  TraceEntry,
} from '../../common/types';
import { argsHash } from '../../common/tools/hash';
import {
  checkFinalAnswer,
  VALIDATOR_SOURCE,
  VALIDATOR_TOOL,
  validatorObservation,
} from '../../common/validator/final-validator';
import type { ValidatorMode } from '../../common/validator/final-validator';
import { boundedRaw } from './bounded';
import { checkToolCall } from './gateway';
import type { PolicyDecision } from './policy';

/** What the run is allowed to do, fixed at its start (the budget may be a getter: top-ups raise it). */
export interface StepRules {
  budget: Budget;
  allow: readonly string[];
  /** The run's domain's tools. */
  registry: ToolRegistry;
  /** The principal policy, as the run applies it at this moment. */
  policy: (name: string, args: Record<string, unknown>) => PolicyDecision;
  /** A conversation run: the model may send the customer messages. */
  conversation?: boolean;
  /** How many times a read may be repeated with nothing new in between (the run's budget.max_repeats). */
  maxRepeats?: number;
}

/** The counters a step reads and advances. */
export interface StepCounters {
  usage: Usage;
  /** Calls that may not be made again: writes since the last customer message (workflows/agent/repeats.ts writesIn). */
  seenCalls: readonly string[];
  /** The read-only calls made since the last news (workflows/agent/repeats.ts), once per time. */
  reads?: readonly string[];
}

/** A tool call the gateway let through, with its normalised arguments. */
export interface AdmittedCall {
  step: number;
  name: string;
  args: Record<string, unknown>;
  argsHash: string;
  /** The loop detector's signature (a declined write gives it back: it was not made). */
  signature?: string;
}

export type StepStart =
  { next: 'stop'; reason: StopReason } | { next: 'continue_as_new' } | { next: 'decide'; step: number; usage: Usage };

/**
 * Before a step: a conversation the customer ended ends the run, a budget spent ends it, a long run
 * continues as new, otherwise the next step.
 */
export function startStep(
  budget: Budget,
  usage: Usage,
  chain: { stepsAtStart: number; every: number; suggested: boolean },
  customerEnded = false,
): StepStart {
  // The customer has left (while the agent worked): nobody reads what a next step would say.
  if (customerEnded) return { next: 'stop', reason: 'customer_ended' };
  const exhausted = budgetExhausted(budget, usage);
  if (exhausted) return { next: 'stop', reason: exhausted };
  if (usage.steps - chain.stepsAtStart >= chain.every || chain.suggested) return { next: 'continue_as_new' };
  const step = usage.steps + 1;
  return { next: 'decide', step, usage: { ...usage, steps: step } };
}

/** A move that ends the run: `trace` is the step's trace entry, `metric` what the tool call counts as. */
export interface StopMove {
  next: 'stop';
  reason: StopReason;
  extra?: Partial<AgentResult>;
  /** The tool call the gateway refused (the run's last action). */
  action?: ToolAction;
  trace?: TraceEntry;
  metric?: { tool: string; outcome: ToolOutcome };
}

export type Move =
  | StopMove
  | { next: 'finish'; action: FinalAction }
  | { next: 'escalate'; action: EscalateAction }
  | { next: 'message'; action: MessageAction }
  | {
      next: 'call_tool';
      action: ToolAction;
      call: AdmittedCall;
      needsApproval: boolean;
      counters: StepCounters;
      /** A read made this many times since the last news: answered from its earlier observation, not run. */
      repeat: number;
    };

/** After the model answered (its tokens already counted): the action contract, then the gateway. */
export function decideMove(decision: DecideOutput, step: number, state: StepCounters, rules: StepRules): Move {
  if (decision.too_large) {
    // The decide activity kept only a preview of an oversized answer.
    const raw_action = { truncated: true, bytes: decision.too_large.bytes, preview: decision.text };
    return { next: 'stop', reason: 'invalid_action:too_large', extra: { raw_action } };
  }
  const validation = validateAction(decision.text, { summary: true, message: rules.conversation === true });
  if (!validation.ok) {
    return {
      next: 'stop',
      reason: `invalid_action:${validation.reason}`,
      extra: { raw_action: boundedRaw(validation.raw) },
    };
  }
  const action = validation.action;
  if (action.kind === 'final') return { next: 'finish', action };
  if (action.kind === 'escalate') return { next: 'escalate', action };
  if (action.kind === 'message') return { next: 'message', action };

  const { usage, seenCalls } = state;
  const reads = state.reads ?? [];
  const gate = checkToolCall(action.name, action.args, {
    maxToolCalls: rules.budget.max_tool_calls,
    allow: rules.allow,
    registry: rules.registry,
    toolCalls: usage.tool_calls,
    seenCalls,
    readCalls: reads,
    maxRepeats: rules.maxRepeats ?? 0,
    policy: rules.policy,
    loopSignature,
  });
  if (!gate.allowed) {
    const trace = {
      step,
      tool: safeToolName(action.name),
      args_hash: gate.argsHash,
      ok: false,
      stop_reason: gate.reason,
    };
    return { next: 'stop', reason: gate.reason, action, trace, metric: { tool: action.name, outcome: 'denied' } };
  }
  const call = { step, name: gate.name, args: gate.args, argsHash: gate.argsHash, signature: gate.signature };
  // A write is remembered for good; a read until the next news (the caller scopes `reads`).
  const write = rules.registry[gate.name]!.effectful === true;
  return {
    next: 'call_tool',
    action,
    call,
    needsApproval: rules.registry[gate.name]!.needsApproval === true,
    counters: {
      // A repeat runs no tool: it is not a tool call.
      usage: gate.repeat > 0 ? usage : { ...usage, tool_calls: usage.tool_calls + 1 },
      seenCalls: write ? [...seenCalls, gate.signature] : seenCalls,
      reads: write ? reads : [...reads, gate.signature],
    },
    repeat: gate.repeat,
  };
}

export type ApprovalMove =
  | StopMove
  | { next: 'rejected'; trace: TraceEntry; history: HistoryEntry; outcome: ToolOutcome }
  | { next: 'call_tool' };

/**
 * After a person was asked about a call: nobody answered (the run stops), a rejection (the model
 * sees it next step), or an approval. `recheck` is the policy again after the wait.
 */
export function approvalMove(
  call: AdmittedCall,
  pending: PendingApproval,
  reply: ApprovalAnswer | undefined,
  recheck: () => PolicyDecision,
): ApprovalMove {
  const entry = { step: call.step, tool: call.name, args_hash: call.argsHash };
  if (!reply) {
    const trace = { ...entry, ok: false, stop_reason: 'approval_timeout' as const };
    return {
      next: 'stop',
      reason: 'approval_timeout',
      trace,
      metric: { tool: call.name, outcome: 'approval_timeout' },
    };
  }
  if (reply.decision === 'reject') {
    // Not a crash: the model sees the rejection and decides what to do next.
    return {
      next: 'rejected',
      trace: { ...entry, ok: false, approval: 'reject' },
      history: { step: call.step, action: toolAction(call), observation: personObservation(pending, reply) },
      outcome: 'rejected',
    };
  }
  // The wait may have taken hours: the refund rules are checked again as they are now.
  const again = recheck();
  if (!again.allowed) {
    const reason = policyStop(again.rule);
    const trace = { ...entry, ok: false, stop_reason: reason, approval: 'approve' as const };
    return { next: 'stop', reason, trace, metric: { tool: call.name, outcome: 'denied' } };
  }
  return { next: 'call_tool' };
}

/** After an escalation: nobody answered (the run stops), or the person's answer is the next observation. */
export function escalationMove(
  pending: PendingApproval,
  action: EscalateAction,
  reply: ApprovalAnswer | undefined,
): StopMove | { next: 'answered'; trace: TraceEntry; history: HistoryEntry } {
  const entry = { step: pending.step, tool: 'escalate', args_hash: escalationHash(action.reason) };
  if (!reply) {
    return {
      next: 'stop',
      reason: 'approval_timeout',
      trace: { ...entry, ok: false, stop_reason: 'approval_timeout' },
    };
  }
  return {
    next: 'answered',
    trace: { ...entry, ok: true, approval: reply.decision },
    history: { step: pending.step, action, observation: personObservation(pending, reply) },
  };
}

/** How the wait for the customer after a message came out. */
export type CustomerReply = 'answered' | 'ended' | 'idle';

/**
 * After the agent's message: the customer answered (the model reads it in the transcript next
 * step), ended the conversation, or did not answer within the idle timeout.
 */
export function customerMove(
  step: number,
  action: MessageAction,
  reply: CustomerReply,
): StopMove | { next: 'answered'; trace: TraceEntry } {
  const trace: TraceEntry = { step, tool: 'message', args_hash: argsHash({ text: action.text }), ok: true };
  if (reply === 'answered') return { next: 'answered', trace };
  const reason = reply === 'ended' ? 'customer_ended' : 'idle_timeout';
  return { next: 'stop', reason, trace: { ...trace, stop_reason: reason } };
}

/** The customer's answer to a consent question: their message's text, or the conversation's end. */
export type ConsentReply = { reply: 'answered'; text: string } | { reply: 'idle' | 'ended' };

/**
 * Before a call on an object someone owns (an order): the owner, looked up by an activity. Another
 * user's object stops the run before anyone is asked; no such object (null) lets the tool refuse it.
 */
export function ownerMove(
  call: AdmittedCall,
  owner: string | null,
  principal: string | undefined,
): StopMove | { next: 'go_on' } {
  if (owner === null || owner === principal) return { next: 'go_on' };
  const reason = policyStop('other_user');
  return {
    next: 'stop',
    reason,
    trace: { step: call.step, tool: call.name, args_hash: call.argsHash, ok: false, stop_reason: reason },
    metric: { tool: call.name, outcome: 'denied' },
  };
}

/**
 * After the workflow asked the customer to confirm the exact call: an explicit yes lets it run;
 * any other message is a refusal the model reads next step (nothing is made); their silence or their
 * leaving ends the run.
 */
export function consentMove(
  call: AdmittedCall,
  reply: ConsentReply,
):
  | StopMove
  | { next: 'call_tool' }
  | { next: 'declined'; trace: TraceEntry; history: HistoryEntry; outcome: 'rejected' } {
  if (reply.reply !== 'answered')
    return { next: 'stop', reason: reply.reply === 'idle' ? 'idle_timeout' : 'customer_ended' };
  if (isExplicitYes(reply.text)) return { next: 'call_tool' };
  return {
    next: 'declined',
    trace: { step: call.step, tool: call.name, args_hash: call.argsHash, ok: false, consent: 'declined' },
    history: {
      step: call.step,
      action: toolAction(call),
      observation: declinedObservation({ tool: call.name, args: call.args }, reply.text),
    },
    outcome: 'rejected',
  };
}

/**
 * Before the customer is asked: an action they could not be shown whole and unambiguously is not
 * asked at all (nothing is made); the model reads why and may propose a clean call.
 */
export function showableMove(
  call: AdmittedCall,
): { next: 'ask' } | { next: 'not_asked'; trace: TraceEntry; history: HistoryEntry; outcome: 'denied' } {
  const request = { tool: call.name, args: call.args };
  const why = unshowable(request);
  if (why === undefined) return { next: 'ask' };
  return {
    next: 'not_asked',
    trace: { step: call.step, tool: call.name, args_hash: call.argsHash, ok: false, consent: 'not_asked' },
    history: { step: call.step, action: toolAction(call), observation: unshowableObservation(request, why) },
    outcome: 'denied',
  };
}

/** The tool's activity failed for good: the run stops with tool_error. */
export function toolFailedMove(call: AdmittedCall, approval: ApprovalAnswer | undefined): StopMove {
  const reason = toolStop.error(call.name);
  const trace = { step: call.step, tool: call.name, args_hash: call.argsHash, ok: false, stop_reason: reason };
  return {
    next: 'stop',
    reason,
    trace: { ...trace, ...approvedMark(approval) },
    metric: { tool: call.name, outcome: 'failed' },
  };
}

/** The tool answered (ok or not): its observation is the model's next input. */
export function toolAnswered(
  call: AdmittedCall,
  approval: ApprovalAnswer | undefined,
  observation: Observation,
  observedAtMs: number,
): { trace: TraceEntry; history: HistoryEntry; outcome: ToolOutcome } {
  return {
    trace: { step: call.step, tool: call.name, args_hash: call.argsHash, ok: true, ...approvedMark(approval) },
    history: {
      step: call.step,
      action: toolAction(call),
      observation,
      observed_at_ms: observedAtMs,
    },
    outcome: observation.ok ? 'ok' : 'error',
  };
}

function toolAction(call: AdmittedCall): ToolAction {
  return { kind: 'tool', name: call.name, args: call.args };
}

function approvedMark(approval: ApprovalAnswer | undefined): { approval?: 'approve' } {
  return approval ? { approval: 'approve' } : {};
}

export type FinalMove =
  | StopMove
  | { next: 'finish'; validation: FinalValidation }
  | { next: 'bounce'; trace: TraceEntry; history: HistoryEntry; validation: FinalValidation };

/**
 * The model gave a final answer: the final validator decides whether it is accepted. Every figure it
 * states must appear in an observation of the run (common/validator/final-validator.ts). enforce: the first
 * unsupported answer goes back to the model as an observation naming the claims (bounce), a second
 * ends the run unsupported_answer; warn: accepted, the claims recorded in the result; off: accepted
 * unchecked. Bounces are counted from the history, so the count survives continue-as-new.
 */
export function finalMove(
  action: FinalAction,
  step: number,
  history: readonly HistoryEntry[],
  mode: ValidatorMode,
): FinalMove {
  const bounces = history.filter((h) => h.observation.source === VALIDATOR_SOURCE).length;
  if (mode === 'off') return { next: 'finish', validation: { mode, verdict: 'unchecked', bounces } };
  const { unsupported } = checkFinalAnswer(
    action.answer,
    history.map((h) => h.observation),
  );
  if (unsupported.length === 0) return { next: 'finish', validation: { mode, verdict: 'supported', bounces } };
  const validation: FinalValidation = { mode, verdict: 'unsupported', bounces, unsupported_claims: unsupported };
  if (mode === 'warn') return { next: 'finish', validation };
  const trace: TraceEntry = {
    step,
    tool: VALIDATOR_TOOL,
    args_hash: argsHash({ answer: action.answer }),
    ok: false,
    unsupported_claims: unsupported,
  };
  if (bounces >= 1) {
    return {
      next: 'stop',
      reason: 'unsupported_answer',
      trace: { ...trace, stop_reason: 'unsupported_answer' },
      extra: { raw_action: boundedRaw(action), validation },
    };
  }
  return {
    next: 'bounce',
    trace,
    history: { step, action, observation: validatorObservation(unsupported) },
    validation: { ...validation, bounces: 1 },
  };
}
