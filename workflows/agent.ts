// The ReAct loop as a Temporal workflow. It owns the state, the budgets and the policy checks;
// every LLM decision and every tool call is an activity. Deterministic code only.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  TimeoutFailure,
  condition,
  isCancellation,
  makeContinueAsNewFunc,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  setWorkflowOptions,
  sleep,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  DecideInput,
  DecideOutput,
  DecisionPayload,
  ReconcileInput,
  ReconcileOutput,
  ToolInput,
} from '../common/types';
import { addTokens, budgetExhausted, EMPTY_USAGE, remaining, resolveBudget, roundUsd } from '../common/budget';
import type { AttemptCharge, Budget, Remaining, Usage } from '../common/budget';
import { chargeAttempts, ledgerOf, planDecision, windDownNotice } from '../common/cost';
import type { DecisionPlan, LlmPricing, WindDownReason } from '../common/cost';
import { checkExtend, EXTEND_UPDATE_DESCRIPTION, extendedBudget, extendUpdate } from '../common/extend';
import {
  ATTEMPT_CHARGED_DESCRIPTION,
  attemptChargedSignal,
  checkAttemptCharged,
  withSignalled,
} from '../common/attempt-charged';
import type { BudgetExtension, ExtendReceipt, ExtendRequest } from '../common/extend';
import { decideSummary, toolCallSummary } from './activity-summary';
import type { Action, EscalateAction } from '../common/contract';
import {
  APPROVAL_UPDATE_DESCRIPTION,
  approvalTimeoutMs,
  approvalUpdate,
  checkApprovalAnswer,
  escalationApprovalId,
  toolCallApprovalId,
} from '../common/approvals';
import type { AnsweredApproval, ApprovalAnswer, ApprovalReceipt, PendingApproval } from '../common/approvals';
import { checkPrincipalPolicy } from './policy';
import { carryState } from './carry';
import { seenCallHash } from '../common/hash';
import { confirmedUsd, countEffects, effectFromObservation, effectFromReconcile } from './effects';
import type { EffectCall } from './effects';
import { checkAgentInput } from '../common/input';
import type { PolicyDecision } from './policy';
import { buildDecisionPayload } from '../common/decision-payload';
import { decideKey, toolKey } from './idempotency';
import { toolActivityOptions } from './tool-options';
import { decideActivityOptions, decideMaxAttempts } from './decide-options';
import { STATE_QUERY_DESCRIPTION, stateQuery } from '../common/queries';
import type { StopReason } from '../common/stop-reasons';
import { TOOL_REGISTRY } from '../common/tool-catalog';
import { CANCELLED_RESULT_MEMO, EFFECTS_MEMO, LLM_BUDGET, LLM_TIMEOUT } from '../common/types';
import type {
  AgentInput,
  AgentResult,
  AgentState,
  EffectEntry,
  HistoryEntry,
  Observation,
  Phase,
  TraceEntry,
} from '../common/types';
import { agentMetrics } from '../common/metrics-sink';
import { attributePairs } from '../common/search-attributes';
import type { RunStatus } from '../common/search-attributes';
import type { Tagged } from '../common/step-tag';
import { approvalMove, decideMove, escalationMove, finalMove, startStep, toolAnswered, toolFailedMove } from './step';
import { validatorModeFor } from '../common/final-validator';
import type { ValidatorMode } from '../common/final-validator';
import type { FinalValidation } from '../common/types';
import type { AdmittedCall, StepRules, StopMove } from './step';

type DecideFn = (input: Tagged<DecideInput>) => Promise<DecideOutput>;
type ToolFn = (input: Tagged<ToolInput>) => Promise<Observation>;
type ReconcileFn = (input: Tagged<ReconcileInput>) => Promise<ReconcileOutput>;

const DEFAULT_CONTINUE_AS_NEW_EVERY = 100;

/** The failure type of a run refused at its entry: its input broke the contract (workflows/input.ts). */
export const INVALID_INPUT = 'InvalidAgentInput';

export async function reactAgent(input: AgentInput): Promise<AgentResult> {
  checkEntry(input);
  const run = new AgentRun(input);
  setHandler(stateQuery, () => run.snapshot(), { description: STATE_QUERY_DESCRIPTION });
  setHandler(approvalUpdate, (answer) => run.answerApproval(answer), {
    validator: (answer) => run.validateApproval(answer),
    description: APPROVAL_UPDATE_DESCRIPTION,
  });
  setHandler(extendUpdate, (request) => run.extend(request), {
    validator: (request) => run.validateExtend(request),
    description: EXTEND_UPDATE_DESCRIPTION,
  });
  setHandler(attemptChargedSignal, (value) => run.attemptCharged(value), {
    description: ATTEMPT_CHARGED_DESCRIPTION,
  });
  return run.execute();
}

// A bug in workflow code (any plain Error) fails the run with that error instead of failing its
// workflow task, which Temporal would retry forever: a run no cancel could end.
setWorkflowOptions({ failureExceptionTypes: [Error] }, reactAgent);

/** Bad input ends the run at once, clearly and for good (the CLI checks the same schema first). */
function checkEntry(input: AgentInput): void {
  const check = checkAgentInput(input);
  const refuse = (message: string) => ApplicationFailure.create({ type: INVALID_INPUT, message, nonRetryable: true });
  if (!check.ok) throw refuse(check.error);
  // `carried` is how a run hands its state to the next one; from a client it would be forged
  // state (a billing fact, a usage, a start time) that the policy gate would trust.
  if (input.carried !== undefined && workflowInfo().continuedFromExecutionRunId === undefined) {
    throw refuse('invalid run input: carried: set only by the workflow itself when it continues as new');
  }
}

class AgentRun {
  /** The operator's budget at the start; top-ups (`extensions`) add to it. */
  private readonly baseBudget: Budget;
  private readonly allow: readonly string[];
  private readonly startedAtMs: number;
  private readonly stepsAtStart: number;
  private usage: Usage;
  private trace: TraceEntry[];
  private history: HistoryEntry[];
  private seenCalls: string[];
  private phase: Phase = 'starting';
  private currentTool: string | undefined;
  private lastAction: Action | undefined;
  private final: AgentResult | undefined;
  private readonly approvalTimeoutMs: number;
  /** Time spent waiting for people, finished waits only; not counted toward max_seconds. */
  private humanWaitMs: number;
  private awaiting: { pending: PendingApproval; sinceMs: number } | undefined;
  private reply: ApprovalAnswer | undefined;
  private readonly answered = new Map<string, AnsweredApproval>();
  /** Upsert the Agent* search attributes (see search-attributes.ts for why this is a flag). */
  private readonly searchAttributes: boolean;
  /** Set when the max_seconds timer cut the run short before any operator cancel. */
  private intent: 'max_seconds' | undefined;
  private loopScope: CancellationScope | undefined;
  private effects: EffectEntry[];
  private omitted: { trace: number; history: number };
  /** Top-ups granted by `agent extend`, in order. */
  private extensions: BudgetExtension[];
  /** The worker's model and price (llm_pricing), asked once when the run first has a dollar budget. */
  private pricing: LlmPricing | undefined;
  /** Set while the run waits for a top-up. */
  private topup: { reason: string; sinceMs: number; expiresMs: number } | undefined;
  /** A top-up wait timed out: the run does not wait again. */
  private topupDeclined: boolean;
  /** The steps whose decision was a wind-down, and why. */
  private readonly windDowns = new Map<number, WindDownReason>();
  /** The decision running now, and the failed attempts its activity Signalled (by attempt). */
  private deciding: { step: number; signalled: Map<number, AttemptCharge> } | undefined;

  constructor(private readonly input: AgentInput) {
    // Fixed for the whole run from the operator's input: nothing a model answer or a tool result
    // says can reach these (there is no code path from an observation to them).
    this.baseBudget = Object.freeze(resolveBudget(input.budget));
    this.allow = Object.freeze([...(input.allow ?? [])]);
    const carried = input.carried;
    this.startedAtMs = carried?.started_at_ms ?? workflowInfo().runStartTime.getTime();
    this.usage = carried ? { ...carried.usage } : { ...EMPTY_USAGE };
    this.trace = carried ? [...carried.trace] : [];
    this.history = carried ? [...carried.history] : [];
    this.seenCalls = carried ? [...carried.seen_calls] : [];
    this.effects = carried?.effects ? [...carried.effects] : [];
    this.omitted = carried?.omitted ? { ...carried.omitted } : { trace: 0, history: 0 };
    // Loop detection keeps short hashes.
    this.seenCalls = this.seenCalls.map(seenCallHash);
    this.stepsAtStart = this.usage.steps;
    this.approvalTimeoutMs = approvalTimeoutMs(input.approval_timeout_seconds);
    this.humanWaitMs = carried?.human_wait_ms ?? 0;
    this.extensions = carried?.extensions ? [...carried.extensions] : [];
    this.topupDeclined = carried?.topup_declined === true;
    this.searchAttributes = input.search_attributes === true;
  }

  /** The budget now: the operator's, plus every top-up. */
  private get budget(): Budget {
    return this.extensions.length === 0 ? this.baseBudget : extendedBudget(this.baseBudget, this.extensions);
  }

  async execute(): Promise<AgentResult> {
    // The client set the attributes' initial values when it started the run (startRun); the
    // first step below publishes the workflow's own, in the same workflow task.
    if (!this.input.carried) agentMetrics.runStarted();
    // max_seconds is a workflow timer racing the loop, so a slow LLM call is cut off at the
    // deadline rather than noticed after it returns.
    const root = CancellationScope.current();
    const loop = new CancellationScope();
    this.loopScope = loop;
    let deadlineHit = false;
    void this.watchDeadline(() => {
      deadlineHit = true;
      // The deadline decides the ending only if the operator had not cancelled first.
      if (!root.consideredCancelled) this.intent ??= 'max_seconds';
      loop.cancel();
    });

    try {
      return await loop.run(() => this.loop());
    } catch (err) {
      if (!isCancellation(err)) throw err;
      // Whichever came first decides: the deadline's timer, or the operator's cancel.
      const deadline = this.intent === 'max_seconds' || (deadlineHit && !root.consideredCancelled);
      if (deadline) {
        return this.stop('max_seconds');
      }
      // The operator's kill switch: end in Temporal's Canceled state, and leave the trace so far
      // where `agent result` can read it.
      const partial = this.stop('cancelled');
      upsertMemo({ [CANCELLED_RESULT_MEMO]: partial });
      throw err;
    }
  }

  /**
   * The max_seconds timer. Time a person spends on an approval is not the agent's: when the timer
   * fires during or after such a wait, it is re-armed for the deadline moved by that wait.
   */
  private async watchDeadline(onDeadline: () => void): Promise<void> {
    try {
      for (;;) {
        const waitedBefore = this.humanWaitMs;
        const secondsBefore = this.budget.max_seconds;
        const deadlineMs = this.startedAtMs + waitedBefore + secondsBefore * 1000;
        await sleep(Math.max(1, deadlineMs - Date.now()), {
          summary: `time budget: max_seconds ${secondsBefore}`,
        });
        // A top-up of seconds moves the deadline too.
        if (this.awaiting === undefined && this.topup === undefined && this.humanWaitMs === waitedBefore) {
          if (this.budget.max_seconds === secondsBefore) return onDeadline();
          continue;
        }
        await condition(() => this.awaiting === undefined && this.topup === undefined);
      }
    } catch {
      // the workflow itself was cancelled: handled in execute()
    }
  }

  private async loop(): Promise<AgentResult> {
    const canEvery = this.input.continue_as_new_every ?? DEFAULT_CONTINUE_AS_NEW_EVERY;
    const currentBudget = () => this.budget;
    const rules: StepRules = {
      // A getter: top-ups raise the tool-call budget the gateway checks.
      get budget() {
        return currentBudget();
      },
      allow: this.allow,
      policy: (name, args) => this.principalPolicy(name, args),
    };
    const validatorMode: ValidatorMode = validatorModeFor(this.input);
    for (;;) {
      this.throwIfCutOff();
      this.tick();
      await this.awaitTopupIfLow();
      const start = startStep(this.budget, this.usage, {
        stepsAtStart: this.stepsAtStart,
        every: canEvery,
        suggested: workflowInfo().continueAsNewSuggested,
      });
      if (start.next === 'stop') return this.stop(start.reason);
      if (start.next === 'continue_as_new') return this.continueAsNew();

      const step = start.step;
      const payload = buildDecisionPayload(this.input.goal, this.input.user_id, this.history, this.allow);
      // Reserve the decision's worst case before it is made; a call that would not fit is not made.
      const plan: DecisionPlan = planDecision(
        this.budget,
        start.usage,
        step,
        JSON.stringify(payload).length,
        await this.pricingIfNeeded(),
      );
      if (plan.kind === 'exhausted') return this.stop(plan.reason);
      if (plan.wind_down) {
        this.windDowns.set(step, plan.wind_down);
        payload.wind_down = { reason: plan.wind_down, notice: windDownNotice(plan.wind_down) };
      }
      this.usage = start.usage;
      agentMetrics.step();
      this.publish('running');
      this.setPhase('deciding');

      const cap = plan.kind === 'decide' ? plan.max_completion_tokens : undefined;
      // Every attempt of the decision, retries included, is checked by the activity against this.
      const leftUsd = cap !== undefined ? roundUsd(this.budget.max_usd - (this.usage.cost_usd ?? 0)) : undefined;
      const decision = await this.decide(step, payload, cap, leftUsd);
      if ('stop' in decision) {
        this.charge(decision.attempts);
        return this.stop(decision.stop);
      }
      this.usage = decision.attempts ? this.charge(decision.attempts) : addTokens(this.usage, decision.usage);
      const move = decideMove(decision, step, { usage: this.usage, seenCalls: this.seenCalls }, rules);
      if (move.action) this.lastAction = move.action;
      if (move.next === 'stop') return this.stopMove(move);
      if (move.next === 'finish') {
        const checked = finalMove(move.action, step, this.history, validatorMode);
        if (checked.next === 'stop') return this.stopMove(checked);
        if (checked.next !== 'finish') {
          // Bounced: the model sees which figures no observation supports, and answers again.
          this.trace.push(checked.trace);
          this.history.push(checked.history);
          continue;
        }
        const { validation } = checked;
        const windDown = this.windDowns.get(step);
        // The wind-down's answer is marked in the trace (a final answer has no trace entry otherwise).
        if (windDown) this.trace.push({ step, tool: 'final', args_hash: '-', ok: true, wind_down: windDown });
        return this.finish(move.action.answer, validation);
      }
      if (move.next === 'escalate') {
        const stopped = await this.escalate(step, move.action);
        if (stopped) return stopped;
        continue;
      }

      this.usage = move.counters.usage;
      this.seenCalls = [...move.counters.seenCalls];
      // The tool-call count is published with the next step (or the end).
      const { call } = move;

      let approval: ApprovalAnswer | undefined;
      if (move.needsApproval) {
        const pending = this.toolCallPending(step, call.name, call.args, call.argsHash);
        approval = await this.awaitPerson(pending);
        const answered = approvalMove(call, pending, approval, () => this.principalPolicy(call.name, call.args));
        if (answered.next === 'stop') return this.stopMove(answered);
        if (answered.next === 'rejected') {
          agentMetrics.toolCall(call.name, answered.outcome);
          this.trace.push(answered.trace);
          this.history.push(answered.history);
          continue;
        }
      }
      this.setPhase('calling_tool', call.name);
      const spec = TOOL_REGISTRY[call.name]!;
      const effect: EffectCall = {
        tool: call.name,
        idempotency_key: toolKey(workflowInfo().workflowId, step, call.name, call.argsHash),
        step,
        args: call.args,
      };
      let observation: Observation;
      try {
        observation = await this.callTool(call);
      } catch (err) {
        // An effect whose outcome is unknown is looked up by key (and settled) before anything
        // else, so no ending, whatever its cause, loses a refund that was made.
        if (spec.effectful) await this.reconcile(effect);
        if (isCancellation(err)) throw err;
        this.throwIfCutOff();
        return this.stopMove(toolFailedMove(call, approval));
      }
      const answered = toolAnswered(call, approval, observation, Date.now());
      agentMetrics.toolCall(call.name, answered.outcome);
      this.trace.push(answered.trace);
      this.history.push(answered.history);
      if (spec.effectful) this.recordEffect(effectFromObservation(effect, observation));
      this.throwIfCutOff();
    }
  }

  /** Ends the run as the step decided: its trace entry and tool metric, then the stop. */
  private stopMove(move: StopMove): AgentResult {
    if (move.metric) agentMetrics.toolCall(move.metric.tool, move.metric.outcome);
    if (move.trace) this.trace.push(move.trace);
    return this.stop(move.reason, move.extra);
  }

  /** The lookup by key, never cancelled: a cut-off effect ends up confirmed, rejected, not made, or (lookup failed) ambiguous. */
  private async reconcile(call: EffectCall): Promise<void> {
    const activities = proxyActivities<Record<string, ReconcileFn>>({
      activityId: `${call.step}-reconcile-${call.tool}`,
      summary: `step ${call.step}: reconcile ${call.tool} by key`,
      startToCloseTimeout: '10 seconds',
      // Short: an operator waiting on a kill switch gets an answer (ambiguous at worst) in a minute.
      scheduleToCloseTimeout: '1 minute',
      retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds' },
    });
    const lookup = activities[`reconcile_${call.tool}`]!;
    this.setPhase('reconciling', call.tool);
    const found = await CancellationScope.nonCancellable(() =>
      lookup({
        idempotency_key: call.idempotency_key,
        settle: true,
        trace: { step: call.step, role: 'reconcile' },
      }).catch((err: unknown) => ({
        error: failureMessage(err),
      })),
    );
    this.recordEffect(effectFromReconcile(call, found));
  }

  private recordEffect(effect: EffectEntry): void {
    this.effects.push(effect);
    // Visible in `agent list` (the memo comes back with every listed run) while the run goes on.
    upsertMemo({ [EFFECTS_MEMO]: countEffects(this.effects) });
  }

  /** The model handed the run to a person; their answer becomes the next observation. */
  private async escalate(step: number, action: EscalateAction): Promise<AgentResult | undefined> {
    const pending = this.newPending({
      id: escalationApprovalId(step),
      kind: 'escalation',
      step,
      reason: action.reason,
    });
    const move = escalationMove(pending, action, await this.awaitPerson(pending));
    if (move.next === 'stop') return this.stopMove(move);
    this.trace.push(move.trace);
    this.history.push(move.history);
    return undefined;
  }

  private toolCallPending(step: number, tool: string, args: Record<string, unknown>, hash: string): PendingApproval {
    const amount = args.amount_usd;
    return this.newPending({
      id: toolCallApprovalId(step, tool, hash),
      kind: 'tool_call',
      step,
      tool,
      args,
      args_hash: hash,
      ...(typeof amount === 'number' ? { amount_usd: amount } : {}),
    });
  }

  private newPending(fields: Omit<PendingApproval, 'requested_at' | 'expires_at'>): PendingApproval {
    const now = Date.now();
    return {
      ...fields,
      requested_at: new Date(now).toISOString(),
      expires_at: new Date(now + this.approvalTimeoutMs).toISOString(),
    };
  }

  /** Waits for the `approval` Update; undefined when nobody answered within the approval timeout. */
  private async awaitPerson(pending: PendingApproval): Promise<ApprovalAnswer | undefined> {
    const sinceMs = Date.now();
    this.awaiting = { pending, sinceMs };
    this.reply = undefined;
    this.setPhase('awaiting_approval', pending.tool ?? 'escalate');
    try {
      const answered = await condition(() => this.reply !== undefined, this.approvalTimeoutMs);
      return answered ? this.reply : undefined;
    } finally {
      this.humanWaitMs += Date.now() - sinceMs;
      this.awaiting = undefined;
      this.reply = undefined;
    }
  }

  /** The Update's validator: rejected answers change nothing and leave no trace in the history. */
  validateApproval(answer: unknown): void {
    const check = checkApprovalAnswer(answer, this.awaiting?.pending, this.answered);
    if (!check.ok)
      throw ApplicationFailure.create({ type: 'InvalidApproval', message: check.error, nonRetryable: true });
  }

  answerApproval(answer: ApprovalAnswer): ApprovalReceipt {
    // Validators do not run on replay, so the handler checks again (same state, same outcome).
    const check = checkApprovalAnswer(answer, this.awaiting?.pending, this.answered);
    if (!check.ok)
      throw ApplicationFailure.create({ type: 'InvalidApproval', message: check.error, nonRetryable: true });
    if (check.duplicate)
      return { id: answer.id, decision: answer.decision, duplicate: true, pending: check.prior.pending };
    const accepted: ApprovalAnswer = {
      id: answer.id,
      decision: answer.decision,
      ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      ...(answer.text !== undefined ? { text: answer.text } : {}),
      ...(answer.operator !== undefined ? { operator: answer.operator } : {}),
    };
    this.answered.set(answer.id, { pending: check.pending, answer: accepted });
    this.reply = accepted;
    return { id: answer.id, decision: answer.decision, duplicate: false, pending: check.pending };
  }

  private principalPolicy(name: string, args: Record<string, unknown>): PolicyDecision {
    return checkPrincipalPolicy(name, args, {
      principalUserId: this.input.user_id,
      history: this.history,
      nowMs: Date.now(),
      confirmedRefundsUsd: confirmedUsd(this.effects),
    });
  }

  private async decide(
    step: number,
    payload: DecisionPayload,
    maxCompletionTokens: number | undefined,
    leftUsd?: number,
  ): Promise<DecideOutput | { stop: StopReason; attempts: AttemptCharge[] }> {
    const { decide } = proxyActivities<{ decide: DecideFn }>({
      activityId: `${step}-decide`,
      summary: decideSummary(step, this.left()),
      ...decideActivityOptions(this.llmMaxRequests()),
    });
    const info = workflowInfo();
    const signalled = new Map<number, AttemptCharge>();
    // The ledger the activity reported, plus the paid attempts it Signalled and the ledger lacks.
    const ledger = (attempts: readonly AttemptCharge[]): AttemptCharge[] => withSignalled(attempts, signalled);
    this.deciding = { step, signalled };
    let decision: DecideOutput;
    try {
      decision = await decide({
        payload,
        idempotency_key: decideKey(info.workflowId, info.firstExecutionRunId, step),
        ...(maxCompletionTokens !== undefined ? { max_completion_tokens: maxCompletionTokens } : {}),
        ...(leftUsd !== undefined ? { left_usd: leftUsd } : {}),
        report_charges: true,
        max_requests: this.llmMaxRequests(),
        trace: { step, role: 'decide' },
      });
    } catch (err) {
      this.deciding = undefined;
      // The attempts that reported usage before the decision failed for good are charged too.
      const attempts = ledger(failureLedger(err));
      // So are those of a decision a cancel or a deadline cut off (its cancellation or its last
      // heartbeat carries them), before the run ends for that reason.
      if (isCancellation(err) || this.cutOff()) this.charge(attempts);
      if (isCancellation(err)) throw err;
      // A hung or dead worker's attempt times out after the cancel or the deadline: that is
      // still the cancel or the deadline, not an LLM timeout.
      this.throwIfCutOff();
      return { stop: classifyLlmFailure(err), attempts };
    }
    this.deciding = undefined;
    decision = { ...decision, attempts: ledger(decision.attempts ?? []) };
    if (this.cutOff()) this.charge(decision.attempts ?? []);
    this.throwIfCutOff();
    return decision;
  }

  /** The model requests one decision may make. */
  private llmMaxRequests(): number {
    return this.input.llm_max_attempts ?? 3;
  }

  /** The attempt_charged Signal: a failed attempt of the decision running now; anything else is dropped. */
  attemptCharged(value: unknown): void {
    const deciding = this.deciding;
    const checked = checkAttemptCharged(
      value,
      deciding && { step: deciding.step, maxAttempts: decideMaxAttempts(this.llmMaxRequests()) },
    );
    if (typeof checked === 'string' || !deciding) return;
    if (!deciding.signalled.has(checked.attempt)) deciding.signalled.set(checked.attempt, checked);
  }

  /** Whether a cancel or a deadline has cut the run off (the loop's scope was cancelled). */
  private cutOff(): boolean {
    return this.loopScope?.consideredCancelled === true;
  }

  /**
   * After a cancel or a deadline the run ends for that reason, whatever an activity just reported.
   * Also checked before each step: code that runs between awaits (a budget check, continue-as-new)
   * must not carry on, or hand a cancelled run's work to a new run, after the scope was cancelled.
   */
  private throwIfCutOff(): void {
    if (this.cutOff()) {
      throw new CancelledFailure(this.intent === 'max_seconds' ? 'max_seconds reached' : 'cancelled by operator');
    }
  }

  private async callTool(call: AdmittedCall): Promise<Observation> {
    const spec = TOOL_REGISTRY[call.name]!;
    const tools = proxyActivities<Record<string, ToolFn>>({
      activityId: `${call.step}-${call.name}`,
      summary: toolCallSummary(call, this.left()),
      ...toolActivityOptions(spec),
    });
    const tool = tools[call.name]!;
    return tool({
      args: call.args,
      idempotency_key: toolKey(workflowInfo().workflowId, call.step, call.name, call.argsHash),
      principal_user_id: this.input.user_id,
      trace: { step: call.step, role: 'tool' },
    });
  }

  private continueAsNew(): Promise<never> {
    this.markWindDowns();
    const state = {
      started_at_ms: this.startedAtMs,
      usage: this.usage,
      trace: this.trace,
      history: this.history,
      seen_calls: this.seenCalls,
      human_wait_ms: this.humanWaitMs,
    };
    const next = {
      ...this.input,
      carried: {
        ...carryState({ ...state, effects: this.effects, omitted: this.omitted }),
        ...(this.extensions.length > 0 ? { extensions: this.extensions } : {}),
        ...(this.topupDeclined ? { topup_declined: true } : {}),
      },
    };
    // The next run keeps this one's workflow task timeout (the client's choice, see startRun).
    return makeContinueAsNewFunc<typeof reactAgent>({ workflowTaskTimeout: workflowInfo().taskTimeoutMs })(next);
  }

  /** What is left of the budget right now (the activity summaries show it). */
  private left(): Remaining {
    return remaining(this.budget, { ...this.usage, elapsed_ms: this.agentElapsedMs() });
  }

  private tick(): void {
    this.usage = { ...this.usage, elapsed_ms: this.agentElapsedMs() };
  }

  /** Wall time since the run started, minus time spent waiting for people. */
  private agentElapsedMs(): number {
    const now = Date.now();
    const waiting = this.awaiting ? now - this.awaiting.sinceMs : this.topup ? now - this.topup.sinceMs : 0;
    return now - this.startedAtMs - this.humanWaitMs - waiting;
  }

  private setPhase(phase: Phase, tool?: string): void {
    this.phase = phase;
    this.currentTool = tool;
    const what =
      phase === 'calling_tool'
        ? `calling ${tool}`
        : phase === 'awaiting_approval'
          ? `awaiting approval of ${tool}`
          : phase === 'reconciling'
            ? `reconciling ${tool} by idempotency key`
            : phase === 'awaiting_topup'
              ? `waiting for a top-up (agent extend): ${tool}`
              : phase;
    setCurrentDetails(`step ${this.usage.steps}/${this.budget.max_steps}: ${what}${this.costDetails()}`);
  }

  private finish(answer: string, validation?: FinalValidation): AgentResult {
    return this.end({ status: 'ok', stop_reason: 'success', answer, ...(validation ? { validation } : {}) });
  }

  private stop(reason: StopReason, extra: Partial<AgentResult> = {}): AgentResult {
    return this.end({ status: 'stopped', stop_reason: reason, ...extra });
  }

  private end(fields: Pick<AgentResult, 'status' | 'stop_reason'> & Partial<AgentResult>): AgentResult {
    this.tick();
    this.markWindDowns();
    const lastWindDown = [...this.windDowns].at(-1);
    this.final = {
      ...fields,
      trace: this.trace,
      history: this.history,
      usage: this.usage,
      budget: this.budget,
      effects: this.effects,
      ...(this.omitted.trace + this.omitted.history > 0 ? { omitted: this.omitted } : {}),
      ...(lastWindDown ? { wind_down: { step: lastWindDown[0], reason: lastWindDown[1] } } : {}),
      ...(this.extensions.length > 0 ? { extensions: this.extensions } : {}),
    };
    this.phase = 'done';
    this.currentTool = undefined;
    const status: RunStatus = fields.stop_reason === 'cancelled' ? 'cancelled' : fields.status;
    this.publish(status, fields.stop_reason);
    agentMetrics.runEnded(status, fields.stop_reason);
    setCurrentDetails(`ended: ${fields.stop_reason} after ${this.usage.steps} step(s)${this.costDetails()}`);
    return this.final;
  }

  /** Keeps the run's search attributes current (a no-op unless the namespace has them). */
  private publish(status: RunStatus, stopReason?: StopReason): void {
    if (!this.searchAttributes) return;
    const pairs = attributePairs({
      status,
      stopReason,
      step: this.usage.steps,
      toolCalls: this.usage.tool_calls,
      principal: String(this.input.user_id),
    });
    // The run's current values (set at start, carried over by continue-as-new, upserted since).
    const current = workflowInfo().typedSearchAttributes;
    const changed = pairs.filter((pair) => current.get(pair.key) !== pair.value);
    if (changed.length > 0) upsertSearchAttributes(changed);
  }

  private waitingFor(): string | undefined {
    if (this.phase === 'deciding') return `the LLM's decision for step ${this.usage.steps}`;
    if (this.phase === 'calling_tool') return `tool ${this.currentTool ?? '?'} (step ${this.usage.steps})`;
    if (this.phase === 'reconciling')
      return `the refunds service's record of ${this.currentTool ?? '?'} (step ${this.usage.steps})`;
    if (this.phase === 'awaiting_topup' && this.topup)
      return `an operator's top-up (agent extend): ${this.topup.reason}, until ${new Date(this.topup.expiresMs).toISOString()}`;
    if (this.phase === 'awaiting_approval' && this.awaiting) {
      const { pending } = this.awaiting;
      return pending.kind === 'escalation'
        ? `a person's answer to the escalation (step ${pending.step}, approval id ${pending.id})`
        : `a person's approval of ${pending.tool ?? 'a tool call'} (step ${pending.step}, approval id ${pending.id})`;
    }
    return undefined;
  }

  snapshot(): AgentState {
    const usage = this.final ? this.usage : { ...this.usage, elapsed_ms: this.agentElapsedMs() };
    return {
      phase: this.phase,
      step: this.usage.steps,
      status: this.final ? this.final.status : 'running',
      stop_reason: this.final?.stop_reason,
      current_tool: this.currentTool,
      waiting_for: this.waitingFor(),
      last_action: this.lastAction,
      usage,
      budget: this.budget,
      remaining: remaining(this.budget, usage),
      trace: this.trace,
      ...(this.awaiting ? { awaiting_approval: this.awaiting.pending } : {}),
      effects: this.effects,
      ...(this.topup
        ? {
            awaiting_topup: {
              reason: this.topup.reason,
              since: new Date(this.topup.sinceMs).toISOString(),
              expires_at: new Date(this.topup.expiresMs).toISOString(),
            },
          }
        : {}),
      ...(this.extensions.length > 0 ? { extensions: this.extensions } : {}),
    };
  }

  /** Adds a decision's charged attempts (from its history: a replay adds the same, once). */
  private charge(attempts: readonly AttemptCharge[]): Usage {
    if (attempts.length === 0) return this.usage;
    this.usage = chargeAttempts(this.usage, attempts);
    for (const a of attempts) agentMetrics.llmAttempt(a.outcome, a.prompt_tokens, a.completion_tokens, a.cost_usd);
    return this.usage;
  }

  /** The worker's price, asked once (a local activity, recorded) when the run first has a dollar budget. */
  private async pricingIfNeeded(): Promise<LlmPricing | undefined> {
    if (this.budget.max_usd <= 0) return undefined;
    if (!this.pricing) {
      const { llm_pricing } = proxyLocalActivities<{ llm_pricing: () => Promise<LlmPricing> }>({
        startToCloseTimeout: '10 seconds',
      });
      this.pricing = await llm_pricing();
    }
    return this.pricing;
  }

  /**
   * Opt-in (topup_wait_seconds): before a step that a budget would stop or wind down, wait for an
   * operator's `agent extend`. A top-up resumes the run (checked again: it may still be short); a
   * wait that times out is not repeated, and the run winds down or stops as it would have.
   */
  private async awaitTopupIfLow(): Promise<void> {
    const waitSeconds = this.input.topup_wait_seconds;
    if (!waitSeconds) return;
    for (;;) {
      if (this.topupDeclined) return;
      const reason = await this.lowBudget();
      if (!reason) return;
      const granted = this.extensions.length;
      const sinceMs = Date.now();
      this.topup = { reason, sinceMs, expiresMs: sinceMs + waitSeconds * 1000 };
      this.setPhase('awaiting_topup', reason);
      let extended: boolean;
      try {
        extended = await condition(() => this.extensions.length > granted, waitSeconds * 1000);
      } finally {
        this.humanWaitMs += Date.now() - sinceMs;
        this.topup = undefined;
      }
      if (!extended) this.topupDeclined = true;
      this.tick();
    }
  }

  /** Which budget would stop the next step or wind it down, if any. */
  private async lowBudget(): Promise<string | undefined> {
    const exhausted = budgetExhausted(this.budget, this.usage);
    if (exhausted) return exhausted;
    const step = this.usage.steps + 1;
    const payload = buildDecisionPayload(this.input.goal, this.input.user_id, this.history, this.allow);
    const plan = planDecision(
      this.budget,
      { ...this.usage, steps: step },
      step,
      JSON.stringify(payload).length,
      await this.pricingIfNeeded(),
    );
    return plan.kind === 'exhausted' ? plan.reason : plan.wind_down;
  }

  /** The `extend` Update's validator: a refusal is not in the history. */
  validateExtend(request: unknown): void {
    const error = checkExtend(request, {
      granted: this.extensions.length,
      running: this.final === undefined,
      budget: this.budget,
    });
    if (error) throw ApplicationFailure.create({ type: 'InvalidTopUp', message: error, nonRetryable: true });
  }

  /** The `extend` Update: the top-up is recorded with who and why, and a waiting run resumes. */
  extend(request: ExtendRequest): ExtendReceipt {
    // Validators do not run on replay: the handler checks again (same state, same outcome), by the
    // rules the run was recorded with, so an accepted top-up replays as accepted.
    this.validateExtend(request);
    const granted: BudgetExtension = {
      ...(request.usd ? { usd: request.usd } : {}),
      ...(request.steps ? { steps: request.steps } : {}),
      ...(request.tool_calls ? { tool_calls: request.tool_calls } : {}),
      ...(request.seconds ? { seconds: request.seconds } : {}),
      ...(request.tokens ? { tokens: request.tokens } : {}),
      reason: request.reason,
      ...(request.operator !== undefined ? { operator: request.operator } : {}),
      step: this.usage.steps,
      at: new Date(Date.now()).toISOString(),
    };
    this.extensions = [...this.extensions, granted];
    return { budget: this.budget, extensions: this.extensions.length };
  }

  /** Trace entries of wind-down steps carry the reason. */
  private markWindDowns(): void {
    if (this.windDowns.size === 0) return;
    this.trace = this.trace.map((entry) => {
      const reason = this.windDowns.get(entry.step);
      return reason && !entry.wind_down ? { ...entry, wind_down: reason } : entry;
    });
  }

  /** What the Web UI's current details add about money: spent, and of what. */
  private costDetails(): string {
    const spent = this.usage.cost_usd ?? 0;
    const max = this.budget.max_usd;
    return max > 0 ? ` · $${spent.toFixed(4)} of $${max}` : spent > 0 ? ` · $${spent.toFixed(4)}` : '';
  }
}

/**
 * The attempts a failed or cancelled decide activity reported: in its failure's or cancellation's
 * details, or its last heartbeat's (a timeout).
 */
function failureLedger(err: unknown): AttemptCharge[] {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure || cause instanceof CancelledFailure) return ledgerOf(cause.details?.[0]);
  if (cause instanceof TimeoutFailure) return ledgerOf(cause.lastHeartbeatDetails);
  return [];
}

function failureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}

/** An LLM decision that failed for good: timeouts (ours or Temporal's) vs. everything else. */
function classifyLlmFailure(err: unknown): StopReason {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) return 'llm_timeout';
  if (cause instanceof ApplicationFailure && cause.type === LLM_TIMEOUT) return 'llm_timeout';
  if (cause instanceof ApplicationFailure && cause.type === LLM_BUDGET) return 'budget_exhausted:usd';
  return 'llm_error';
}
