// The agent's loop: step after step the model decides and the run acts on it, until an ending.
// The workflow runs it with Temporal behind its ports (agent.ts: activities, Updates, timers,
// search attributes); the benchmark's in-process baseline (bench/baseline.ts) runs the
// very same loop with the activity functions called directly. Everything that touches the world,
// waits or ends the run is a port; the decisions are workflows/agent/step.ts's. Deterministic code.
import { addTokens, budgetExhausted } from '../../common/cost/budget';
import type { AttemptCharge, Budget, Usage } from '../../common/cost/budget';
import { chargeAttempts, planDecision, windDownNotice } from '../../common/cost/cost';
import type { LlmPricing, WindDownReason } from '../../common/cost/cost';
import type { Action, EscalateAction, FinalAction, MessageAction } from '../../common/contract';
import { escalationApprovalId, toolCallApprovalId } from '../../common/conversation/approvals';
import type { ApprovalAnswer, PendingApproval } from '../../common/conversation/approvals';
import { buildDecisionPayload, promptChars } from '../../common/model-view/decision-payload';
import { DEFAULT_CONTEXT_TOKENS, isCompacted, planView, viewSourceOf } from '../../common/model-view/model-view';
import type { ViewRef } from '../../common/model-view/model-view';
import { validatorModeFor } from '../../common/validator/final-validator';
import type { ValidatorMode } from '../../common/validator/final-validator';
import type { ToolOutcome } from '../../common/temporal/metrics-sink';
import type { StopReason } from '../../common/stop-reasons';
import type { Domain } from '../../common/domain';
import type { ToolRegistry } from '../../common/tools/tool-catalog';
import type {
  AgentInput,
  AgentResult,
  DecideOutput,
  DecisionPayload,
  EffectEntry,
  FinalValidation,
  HistoryEntry,
  Observation,
  Phase,
  ReadScope,
  TraceEntry,
} from '../../common/types';
import { effectFromObservation, effectFromReconcile } from './effects';
import type { EffectCall } from './effects';
import { toolKey } from './idempotency';
import type { PolicyDecision } from './policy';
import {
  approvalMove,
  consentMove,
  showableMove,
  customerMove,
  decideMove,
  escalationMove,
  finalMove,
  ownerMove,
  startStep,
  toolAnswered,
  toolFailedMove,
} from './step';
import type { AdmittedCall, StepRules, StepStart, StopMove } from './step';
import type { PendingFields, WaitEnd } from '../conversation/waits';
import { DEFAULT_MAX_REPEATS, readScopeKey, readsIn, readsShown, repeatAnswer, writesIn } from './repeats';
import { loopSignature } from '../../domains/index';
import type { ConversationPort } from '../conversation/conversation';
import type { Transcript } from '../../common/conversation/conversation';
import { inStepSpan, stepEvent } from '../tracing/step-span';

/** Steps per run before it continues as new, unless the input says otherwise. */
export const DEFAULT_CONTINUE_AS_NEW_EVERY = 100;

/** What the loop reads and advances; the workflow's query reads the same object. */
export interface LoopState {
  usage: Usage;
  trace: TraceEntry[];
  history: HistoryEntry[];
  /** Calls never to be made again (writes; every call, in runs recorded before reads were scoped). */
  seenCalls: string[];
  /** The reads made since the last news, for repeats (workflows/agent/repeats.ts). */
  reads?: ReadScope | undefined;
  /** How many customer messages there were when `seenCalls` began (a consenting yes included): workflows/agent/repeats.ts. */
  seenSince?: number | undefined;
  effects: EffectEntry[];
  /** Whom the run acts for: from its input, or learnt by authenticating the customer (then carried). */
  principal: string | undefined;
  /** The kind of store the run's state lives in, as its first call that named one reported (then carried). */
  store?: string | undefined;
  /** The request's characters outside the view, as the last decision measured them (then carried). */
  fixedChars?: number | undefined;
  lastAction?: Action;
  /** The steps whose decision was a wind-down, and why. */
  readonly windDowns: Map<number, WindDownReason>;
}

/** A decision that failed for good: why the run stops, and the attempts it was charged for. */
export interface DecideStop {
  stop: StopReason;
  attempts: AttemptCharge[];
}

export interface LoopPorts<R> {
  state: LoopState;
  input: AgentInput;
  /** The run's domain and its tools by name. */
  domain: Domain;
  registry: ToolRegistry;
  workflowId: string;
  /** Whose world the tools act on and the prefix of effect keys (workflows/agent/idempotency.ts stateKey). */
  stateKey: string;
  /** The steps the chain had taken when this run started (continue-as-new counts from here). */
  stepsAtStart: number;
  /** The budget now (top-ups raise it). */
  budget(): Budget;
  /** The agent's time so far: wall time minus time spent waiting for people. */
  elapsedMs(): number;
  continueAsNewSuggested(): boolean;
  /** The principal policy, as the run applies it at this moment. */
  policy(name: string, args: Record<string, unknown>): PolicyDecision;
  /** The worker's price, when the run has a dollar budget. */
  pricing(): Promise<LlmPricing | undefined>;
  decide(
    step: number,
    payload: DecisionPayload,
    cap?: number,
    leftUsd?: number,
    view?: ViewRef,
  ): Promise<DecideOutput | DecideStop>;
  callTool(call: AdmittedCall, idempotencyKey: string): Promise<Observation>;
  /** The lookup by key of an effect whose call was cut off or failed. */
  reconcile(effect: EffectCall): Promise<EffectEntry>;
  /** Whom the object a call changes belongs to (the tool's owner lookup), or null: no such object. */
  owner(call: AdmittedCall): Promise<string | null>;
  /** The question with when it was asked; then the person's answer, or undefined (nobody answered in time). */
  pending(fields: PendingFields): PendingApproval;
  askPerson(pending: PendingApproval): Promise<ApprovalAnswer | undefined>;
  /** A conversation run: the transcript, and messages to the customer; absent: not a conversation. */
  conversation?: ConversationPort;
  /** Waiting for an operator's top-up when a budget runs low; absent: the run never waits. */
  topUp?: {
    declined(): boolean;
    wait(reason: string): Promise<WaitEnd>;
    /** No top-up is needed now: a wait handed on by the previous run is over. */
    notNeeded(): void;
  };
  /** A cancel or a deadline: `check` throws once the run is cut off. */
  cutOff: { check(): void; isCancellation(err: unknown): boolean };
  /** Where the loop reports what it does (metrics, search attributes, details, memo). */
  record: {
    step(): void;
    toolCall(tool: string, outcome: ToolOutcome): void;
    attempts(attempts: readonly AttemptCharge[]): void;
    publish(): void;
    phase(phase: Phase, tool?: string): void;
    effects(effects: readonly EffectEntry[]): void;
  };
  end: {
    stop(reason: StopReason, extra?: Partial<AgentResult>): R;
    finish(answer: string, validation: FinalValidation): R;
    /** The next run takes over (never returns), or undefined: the chain goes on in place. */
    continueAsNew(): Promise<R | undefined>;
  };
}

/** Runs the loop to its ending: what `end` made of it. */
export async function runLoop<R>(p: LoopPorts<R>): Promise<R> {
  const every = p.input.continue_as_new_every ?? DEFAULT_CONTINUE_AS_NEW_EVERY;
  const mode = validatorModeFor(p.input, p.registry);
  const rules: StepRules = {
    // A getter: top-ups raise the tool-call budget the gateway checks.
    get budget() {
      return p.budget();
    },
    allow: Object.freeze([...(p.input.allow ?? [])]),
    registry: p.registry,
    maxRepeats: p.budget().max_repeats ?? DEFAULT_MAX_REPEATS,
    policy: (name, args) => p.policy(name, args),
    conversation: p.conversation !== undefined,
  };
  let stepsAtStart = p.stepsAtStart;
  // The previous run continued as new while its customer had not answered: wait on, before any step.
  const handedOn = p.conversation?.awaitingReply();
  if (handedOn) {
    const ended = await converse(p, handedOn.step, { kind: 'message', text: handedOn.text });
    if (ended) return ended.result;
  }
  for (;;) {
    p.cutOff.check();
    tick(p);
    if ((await topUpIfLow(p, rules.allow)) === 'continue_as_new') {
      // Temporal suggested it during the top-up wait: the next run waits on, until the same deadline.
      const next = await p.end.continueAsNew();
      if (next !== undefined) return next;
      stepsAtStart = p.state.usage.steps;
      continue;
    }
    const suggested = p.continueAsNewSuggested();
    const chain = { stepsAtStart, every, suggested };
    const start = startStep(p.budget(), p.state.usage, chain, p.conversation?.ended());
    if (start.next === 'stop') return p.end.stop(start.reason);
    if (start.next === 'continue_as_new') {
      const next = await p.end.continueAsNew();
      if (next !== undefined) return next;
      stepsAtStart = p.state.usage.steps;
      continue;
    }
    // A span per step in a traced run (workflows/tracing/step-span.ts); nothing otherwise.
    const ended = await inStepSpan(start.step, () => runStep(p, start, rules, mode));
    if (ended) return ended.result;
  }
}

/** Adds a decision's charged attempts to the run's usage (from its history: a replay adds the same, once). */
export function charge(
  state: LoopState,
  attempts: readonly AttemptCharge[],
  record: (attempts: readonly AttemptCharge[]) => void,
): Usage {
  if (attempts.length === 0) return state.usage;
  state.usage = chargeAttempts(state.usage, attempts);
  record(attempts);
  return state.usage;
}

type Step = Extract<StepStart, { next: 'decide' }>;
/** A step that ended the run carries its result; undefined: on to the next step. */
type Ended<R> = { result: R } | undefined;

async function runStep<R>(p: LoopPorts<R>, start: Step, rules: StepRules, mode: ValidatorMode): Promise<Ended<R>> {
  const { state } = p;
  const { step } = start;
  const decided = await decideStep(p, start, rules.allow);
  if ('result' in decided) return decided;
  // News since the reads remembered (a customer message the model read, a write made): a new scope.
  const scope = readScopeKey(decided.customerMessages, state.effects.length);
  const reads = readsIn(state.reads, scope);
  // A write asked for again in a customer message since it was made is their request, not a loop.
  const seen = writesIn(state.seenCalls, state.seenSince, decided.customerMessages);
  state.seenCalls = seen.calls;
  state.seenSince = seen.since;
  // A read whose result the model saw compacted is read again as a new call (the note says to), never a repeat.
  const fresh = readsShown(reads, state.history, (e) => isCompacted(e, decided.view, p.registry), loopSignature);
  const move = decideMove(
    decided.decision,
    step,
    { usage: state.usage, seenCalls: state.seenCalls, reads: fresh },
    rules,
  );
  if (move.action) state.lastAction = move.action;
  if (move.next === 'stop') return { result: stopMove(p, move) };
  if (move.next === 'finish') return finish(p, move.action, step, mode);
  if (move.next === 'escalate') return escalate(p, step, move.action);
  if (move.next === 'message') return converse(p, step, move.action);
  state.usage = move.counters.usage;
  state.seenCalls = [...move.counters.seenCalls];
  state.reads = { scope, calls: [...(move.counters.reads ?? [])] };
  if (move.repeat > 0) {
    const again = repeatAnswer(move.call, move.repeat, rules.maxRepeats ?? 0, state.history, loopSignature);
    if (again) {
      // The tool is not called: the model gets its earlier answer again, marked as a repeat.
      state.trace.push(again.trace);
      state.history.push(again.history);
      return undefined;
    }
    // The earlier answer fell out of the carried history: the read is made again, as a new call.
    state.usage = { ...state.usage, tool_calls: state.usage.tool_calls + 1 };
  }
  // The tool-call count is published with the next step (or the end).
  return toolStep(p, move.call, move.needsApproval);
}

/** Plans the decision (its worst case reserved first: a call that would not fit is not made), then asks the model. */
async function decideStep<R>(
  p: LoopPorts<R>,
  start: Step,
  allow: readonly string[],
): Promise<{ result: R } | { decision: DecideOutput; customerMessages: number; view: ViewRef }> {
  const { state } = p;
  const { step } = start;
  const { payload, view, transcript } = nextDecision(p, allow);
  const plan = planDecision(p.budget(), start.usage, step, view.chars, await p.pricing());
  if (plan.kind === 'exhausted') return { result: p.end.stop(plan.reason) };
  if (plan.wind_down) {
    state.windDowns.set(step, plan.wind_down);
    payload.wind_down = { reason: plan.wind_down, notice: windDownNotice(plan.wind_down) };
  }
  state.usage = start.usage;
  p.record.step();
  p.record.publish();
  p.record.phase('deciding');
  // Every attempt of the decision, retries included, is checked by the activity against plan.left_usd.
  const decision = await p.decide(step, payload, plan.max_completion_tokens, plan.left_usd, view.ref);
  if ('stop' in decision) {
    charge(state, decision.attempts, p.record.attempts);
    return { result: p.end.stop(decision.stop) };
  }
  state.usage = decision.attempts
    ? charge(state, decision.attempts, p.record.attempts)
    : addTokens(state.usage, decision.usage);
  if (isFixedChars(decision.fixed_chars)) state.fixedChars = decision.fixed_chars;
  return { decision, customerMessages: transcript?.customer_messages ?? 0, view: view.ref };
}

/** A final answer: the validator accepts it, bounces it back to the model once, or ends the run. */
function finish<R>(p: LoopPorts<R>, action: FinalAction, step: number, mode: ValidatorMode): Ended<R> {
  const { state } = p;
  // The customer wrote while the model decided: this answer did not read it, so it is not sent;
  // the model decides again with the new turns (each try costs a step, so the budget bounds it).
  if (p.conversation?.unread()) return undefined;
  const checked = finalMove(action, step, state.history, mode);
  if (checked.next === 'stop') return { result: stopMove(p, checked) };
  if (checked.next === 'bounce') {
    // The model sees which figures no observation supports, and answers again.
    state.trace.push(checked.trace);
    state.history.push(checked.history);
    return undefined;
  }
  const windDown = state.windDowns.get(step);
  // The wind-down's answer is marked in the trace (a final answer has no trace entry otherwise).
  if (windDown) state.trace.push({ step, tool: 'final', args_hash: '-', ok: true, wind_down: windDown });
  return { result: p.end.finish(action.answer, checked.validation) };
}

/** The model handed the run to a person; their answer becomes the next observation. */
async function escalate<R>(p: LoopPorts<R>, step: number, action: EscalateAction): Promise<Ended<R>> {
  const pending = p.pending({ id: escalationApprovalId(step), kind: 'escalation', step, reason: action.reason });
  const move = escalationMove(pending, action, await p.askPerson(pending));
  if (move.next === 'stop') return { result: stopMove(p, move) };
  p.state.trace.push(move.trace);
  p.state.history.push(move.history);
  return undefined;
}

/** The agent's message to the customer; the run waits for the answer (the model reads it in the transcript). */
async function converse<R>(p: LoopPorts<R>, step: number, action: MessageAction): Promise<Ended<R>> {
  let reply = await p.conversation!.message(step, action.text);
  // Temporal suggested continuing as new during the wait (a large history): the next run waits on.
  while (reply === 'continue_as_new') {
    const next = await p.end.continueAsNew();
    if (next !== undefined) return { result: next };
    reply = await p.conversation!.message(step, action.text);
  }
  const move = customerMove(step, action, reply);
  if (move.next === 'stop') return { result: stopMove(p, move) };
  p.state.trace.push(move.trace);
  return undefined;
}

/** A call the gateway let through: its owner checked, the customer's yes and a person's approval when it needs them, then the tool. */
async function toolStep<R>(p: LoopPorts<R>, call: AdmittedCall, needsApproval: boolean): Promise<Ended<R>> {
  const { state } = p;
  const spec = p.registry[call.name]!;
  if (spec.ownedArg !== undefined) {
    const denied = await ownerCheck(p, call);
    if (denied) return denied;
  }
  if (spec.needsConsent) {
    const shown = showableMove(call);
    if (shown.next === 'not_asked') {
      p.record.toolCall(call.name, shown.outcome);
      state.trace.push(shown.trace);
      state.history.push(shown.history);
      return undefined;
    }
    const consent = consentMove(call, await p.conversation!.consent(call.step, { tool: call.name, args: call.args }));
    stepEvent('consent', {
      'gen_ai.tool.name': call.name,
      'agent.consent': consent.next === 'call_tool' ? 'given' : consent.next === 'stop' ? consent.reason : 'declined',
    });
    if (consent.next === 'stop') return { result: stopMove(p, consent) };
    if (consent.next === 'declined') {
      // Not made: when the model proposes it again, the customer is asked again (no loop).
      state.seenCalls = state.seenCalls.filter((seen) => seen !== call.signature);
      p.record.toolCall(call.name, consent.outcome);
      state.trace.push(consent.trace);
      state.history.push(consent.history);
      return undefined;
    }
    // The customer's yes is no new request: the same write again after it alone is still a loop.
    state.seenSince = p.conversation!.transcript().customer_messages;
  }
  let approval: ApprovalAnswer | undefined;
  if (needsApproval) {
    const amount = call.args.amount_usd;
    const pending = p.pending({
      id: toolCallApprovalId(call.step, call.name, call.argsHash),
      kind: 'tool_call',
      step: call.step,
      tool: call.name,
      args: call.args,
      args_hash: call.argsHash,
      ...(typeof amount === 'number' ? { amount_usd: amount } : {}),
    });
    approval = await p.askPerson(pending);
    stepEvent('approval', { 'gen_ai.tool.name': call.name, 'agent.approval': approval?.decision ?? 'timeout' });
    const answered = approvalMove(call, pending, approval, () => p.policy(call.name, call.args));
    if (answered.next === 'stop') return { result: stopMove(p, answered) };
    if (answered.next === 'rejected') {
      p.record.toolCall(call.name, answered.outcome);
      state.trace.push(answered.trace);
      state.history.push(answered.history);
      return undefined;
    }
  }
  return callTool(p, call, approval);
}

/**
 * Whom the object a call changes belongs to, before anyone is asked: another user's stops the run;
 * a lookup that failed for good (an MCP server down) ends it tool_error, nobody asked about an
 * object of unknown owner.
 */
async function ownerCheck<R>(p: LoopPorts<R>, call: AdmittedCall): Promise<Ended<R>> {
  let owner: string | null;
  try {
    owner = await p.owner(call);
  } catch (err) {
    if (p.cutOff.isCancellation(err)) throw err;
    p.cutOff.check();
    return { result: stopMove(p, toolFailedMove(call, undefined)) };
  }
  const owned = ownerMove(call, owner, p.state.principal);
  return owned.next === 'stop' ? { result: stopMove(p, owned) } : undefined;
}

async function callTool<R>(
  p: LoopPorts<R>,
  call: AdmittedCall,
  approval: ApprovalAnswer | undefined,
): Promise<Ended<R>> {
  const { state } = p;
  p.record.phase('calling_tool', call.name);
  const spec = p.registry[call.name]!;
  const effect: EffectCall = {
    tool: call.name,
    idempotency_key: toolKey(p.stateKey, call.step, call.name, call.argsHash),
    step: call.step,
    args: call.args,
  };
  let observation: Observation;
  try {
    observation = await p.callTool(call, effect.idempotency_key);
  } catch (err) {
    // An effect whose outcome is unknown is looked up by key (and settled) before anything
    // else, so no ending, whatever its cause, loses a refund that was made.
    if (spec.effectful)
      recordEffect(p, spec.reconcile || spec.reconcileByKey ? await p.reconcile(effect) : unreconcilable(effect));
    if (p.cutOff.isCancellation(err)) throw err;
    p.cutOff.check();
    return { result: stopMove(p, toolFailedMove(call, approval)) };
  }
  const answered = toolAnswered(call, approval, observation, Date.now());
  p.record.toolCall(call.name, answered.outcome);
  state.trace.push(answered.trace);
  state.history.push(answered.history);
  if (spec.effectful) recordEffect(p, effectFromObservation(effect, observation, spec.outcomeByOk));
  p.cutOff.check();
  // A trusted tool result names the customer: the run acts for them from now on (the first one only).
  if (spec.authenticates && observation.ok && typeof observation.data === 'string' && state.principal === undefined)
    state.principal = observation.data;
  // The store the first call found: later calls go only to workers on a store of that kind.
  if (state.store === undefined && typeof observation.store === 'string') state.store = observation.store;
  if (spec.endsRun && observation.ok) return { result: p.end.stop(spec.endsRun) };
  return undefined;
}

function recordEffect<R>(p: LoopPorts<R>, effect: EffectEntry): void {
  stepEvent('effect', {
    'gen_ai.tool.name': effect.tool,
    'agent.effect.state': effect.state,
    'agent.effect.via': effect.via,
    'agent.idempotency_key': effect.idempotency_key,
  });
  p.state.effects.push(effect);
  p.record.effects(p.state.effects);
}

/** Ends the run as the step decided: its trace entry and tool metric, then the stop. */
function stopMove<R>(p: LoopPorts<R>, move: StopMove): R {
  if (move.metric) p.record.toolCall(move.metric.tool, move.metric.outcome);
  if (move.trace) p.state.trace.push(move.trace);
  return p.end.stop(move.reason, move.extra);
}

function tick<R>(p: LoopPorts<R>): void {
  p.state.usage = { ...p.state.usage, elapsed_ms: p.elapsedMs() };
}

/**
 * Opt-in (topup_wait_seconds): before a step that a budget would stop or wind down, wait for an
 * operator's `agent extend`. A top-up resumes the run (checked again: it may still be short); a
 * wait that times out is not repeated, and the run winds down or stops as it would have.
 */
async function topUpIfLow<R>(p: LoopPorts<R>, allow: readonly string[]): Promise<'continue_as_new' | undefined> {
  if (!p.topUp) return;
  for (;;) {
    if (p.topUp.declined()) return;
    const reason = await lowBudget(p, allow);
    if (!reason) {
      p.topUp.notNeeded();
      return;
    }
    if ((await p.topUp.wait(reason)) === 'continue_as_new') return 'continue_as_new';
    tick(p);
  }
}

/** Which budget would stop the next step or wind it down, if any. */
async function lowBudget<R>(p: LoopPorts<R>, allow: readonly string[]): Promise<string | undefined> {
  const { usage } = p.state;
  const exhausted = budgetExhausted(p.budget(), usage);
  if (exhausted) return exhausted;
  const step = usage.steps + 1;
  const { view } = nextDecision(p, allow);
  const plan = planDecision(p.budget(), { ...usage, steps: step }, step, view.chars, await p.pricing());
  return plan.kind === 'exhausted' ? plan.reason : plan.wind_down;
}

/** The next decision: its payload (what the history records), the view planned for it and its size, once. */
function nextDecision<R>(
  p: LoopPorts<R>,
  allow: readonly string[],
): { payload: DecisionPayload; view: { ref: ViewRef; chars: number }; transcript: Transcript | undefined } {
  const { state } = p;
  const transcript = p.conversation?.transcript();
  const payload = buildDecisionPayload(p.input.goal, state.principal, state.history, allow, p.domain, transcript, true);
  return { payload, view: modelView(p, payload, transcript), transcript };
}

/**
 * The whole run as the model will read it: what is compacted to keep within the context budget,
 * and its estimated size (what the decision's prompt costs). The request's part outside the view
 * (the system prompt, the tools) counts toward the budget as the last decision measured it
 * (DecideOutput.fixed_chars, recorded in the history: deterministic); before any, the payload
 * stands for it (a run's first decision has no result to compact). The cost estimate counts the
 * payload instead, as before: llm_pricing's overhead_tokens adds the system prompt there.
 */
function modelView<R>(
  p: LoopPorts<R>,
  payload: DecisionPayload,
  transcript: Transcript | undefined,
): { ref: ViewRef; chars: number } {
  const source = viewSourceOf(p.input, p.domain, p.state.history, transcript, p.state.principal);
  const budget = p.input.context_tokens ?? DEFAULT_CONTEXT_TOKENS;
  const payloadChars = promptChars(payload, p.domain);
  const fixed = p.state.fixedChars ?? payloadChars;
  const plan = planView(source, p.registry, fixed, budget);
  return { ref: plan.ref, chars: plan.chars - fixed + payloadChars };
}

/** A measured size the loop believes: a decide output from a hostile or older worker may carry anything. */
function isFixedChars(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

/** An effect cut off with no reconcile hook (the worker registers `reconcile_<tool>` only for those): its outcome stays unknown, and the result says so. */
function unreconcilable(effect: EffectCall) {
  return effectFromReconcile(effect, { error: `${effect.tool} has no reconcile lookup: outcome unknown` });
}
