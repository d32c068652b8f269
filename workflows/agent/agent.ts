// The ReAct loop as a Temporal workflow: its entry point, its handlers (the state query, the
// approval and extend Updates, the attempt_charged Signal) and its state. The loop itself is
// runLoop (run-loop.ts), run here with Temporal behind its ports; every LLM decision and every tool
// call is an activity. Deterministic code only.
import {
  ApplicationFailure,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  setCurrentDetails,
  setHandler,
  setWorkflowOptions,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { remaining, resolveBudget } from '../../common/cost/budget';
import type { Budget, Remaining } from '../../common/cost/budget';
import { checkExtend, EXTEND_UPDATE_DESCRIPTION, extendedBudget, extendUpdate } from '../../common/cost/extend';
import type { BudgetExtension, ExtendReceipt, ExtendRequest } from '../../common/cost/extend';
import { ATTEMPT_CHARGED_DESCRIPTION, ATTEMPT_CHARGED_SIGNAL } from '../../common/cost/attempt-charged';
import { decodedArgument, undecodedSignal } from '../../common/temporal/undecoded-signal';
import { APPROVAL_UPDATE_DESCRIPTION, approvalTimeoutMs, approvalUpdate } from '../../common/conversation/approvals';
import type { PendingApproval } from '../../common/conversation/approvals';
import { STATE_QUERY_DESCRIPTION, stateQuery } from '../../common/queries';
import { SAY_UPDATE_DESCRIPTION, sayUpdate } from '../../common/conversation/conversation';
import {
  MODEL_VIEW_QUERY_DESCRIPTION,
  modelViewQuery,
  viewForQuery,
  viewSourceOf,
} from '../../common/model-view/model-view';
import type { ViewRef } from '../../common/model-view/model-view';
import type { ViewSource } from '../../common/model-view/model-view';
import type { SayReceipt, SayRequest } from '../../common/conversation/conversation';
import { stopReasonFamily } from '../../common/stop-reasons';
import type { StopReason } from '../../common/stop-reasons';
import { CANCELLED_RESULT_MEMO, EFFECTS_MEMO } from '../../common/types';
import type { AgentInput, AgentResult, AgentState, FinalValidation, Phase } from '../../common/types';
import { agentMetrics, recordAttempts } from '../../common/temporal/metrics-sink';
import type { RunStatus } from '../../common/temporal/search-attributes';
import { loopStateOf, nextRunInput } from './carry';
import { authenticatingTools } from '../../common/conversation/authentication-entry';
import { CutOff } from './cut-off';
import { checkEntry } from './entry';
import { Conversation } from '../conversation/conversation';
import { Decisions, workerPricing } from '../calls/decide-call';
import { confirmedUsd, countEffects } from './effects';
import { domainOf, registryOfDomain } from '../../domains/index';
import { stateKey } from './idempotency';
import type { Domain } from '../../common/domain';
import { specOf } from '../../common/tools/tool-catalog';
import type { ToolRegistry } from '../../common/tools/tool-catalog';
import { checkPrincipalPolicy } from './policy';
import type { PolicyDecision } from './policy';
import { charge, runLoop } from './run-loop';
import type { LoopPorts, LoopState } from './run-loop';
import {
  approvalTimerSummary,
  conversationDetails,
  costDetails,
  phaseDetails,
  stateOf,
} from '../reporting/run-details';
import { publishStatus, resultOf, withWindDowns } from './run-result';
import type { Ending } from './run-result';
import { callToolActivity, ownerActivity, reconcileActivity } from '../calls/tool-call';
import { reconcileMcpActivity } from '../mcp/reconcile';
import { ownerMcpActivity } from '../mcp/owner';
import { grantOf, Waits } from '../conversation/waits';
import { joinMcpTools } from '../mcp/run';
import type { McpRun } from '../mcp/run';
import { callMcpToolActivity, isMcpTool } from '../mcp/tools';

export { INVALID_INPUT } from './entry';

/** What the say validator checks instead of a request sent with other than one argument (refused as not an object). */
const TWO_ARGUMENTS = 'one message per say: {text, end?}';

export async function reactAgent(input: AgentInput): Promise<AgentResult> {
  checkEntry(input);
  const run = new AgentRun(input);
  setHandler(stateQuery, () => run.snapshot(), { description: STATE_QUERY_DESCRIPTION });
  setHandler(modelViewQuery, (ref) => run.modelView(ref), { description: MODEL_VIEW_QUERY_DESCRIPTION });
  setHandler(approvalUpdate, (answer) => run.waits.answer(answer), {
    validator: (answer) => run.waits.validateAnswer(answer),
    description: APPROVAL_UPDATE_DESCRIPTION,
  });
  setHandler(extendUpdate, (request) => run.extend(request), {
    validator: (request) => run.validateExtend(request),
    description: EXTEND_UPDATE_DESCRIPTION,
  });
  setHandler(sayUpdate, (message) => run.say(message), {
    // One message per Update: a second argument (any client can send one) would be dropped unread.
    validator: (...args: unknown[]) => run.conversation.validate(args.length === 1 ? args[0] : TWO_ARGUMENTS),
    description: SAY_UPDATE_DESCRIPTION,
  });
  // Read undecoded, so that a payload nothing can read is dropped here instead of failing the task.
  setHandler(
    undecodedSignal(ATTEMPT_CHARGED_SIGNAL),
    (...args: unknown[]) => {
      const arg = decodedArgument(args[0]);
      if (typeof arg === 'string') return log.warn(`dropped an ${ATTEMPT_CHARGED_SIGNAL} signal: ${arg}`);
      run.decisions.attemptCharged(arg.value);
    },
    { description: ATTEMPT_CHARGED_DESCRIPTION },
  );
  return run.execute();
}

// A bug in workflow code (any plain Error) fails the run with that error instead of failing its
// workflow task, which Temporal would retry forever: a run no cancel could end.
setWorkflowOptions({ failureExceptionTypes: [Error] }, reactAgent);

class AgentRun {
  /** The operator's budget at the start; top-ups (`extensions`) add to it. */
  private readonly baseBudget: Budget;
  private readonly startedAtMs: number;
  private readonly state: LoopState;
  private readonly domain: Domain;
  private readonly stateKey: string;
  /** The run's MCP servers' tools, joined to its domain at its start; absent without MCP servers. */
  private mcp: McpRun | undefined;
  readonly waits: Waits;
  readonly decisions: Decisions;
  readonly conversation: Conversation;
  private phase: Phase = 'starting';
  /** The first line of the current details: the phase now, or how the run ended. */
  private detailsHead = '';
  private currentTool: string | undefined;
  private final: AgentResult | undefined;
  private readonly cut = new CutOff();
  private readonly omitted: { trace: number; history: number };
  /** Top-ups granted by `agent extend`, in order. */
  private extensions: BudgetExtension[];
  /** The worker's model and price (llm_pricing), asked once when the run first has a dollar budget. */
  private readonly pricing = workerPricing();

  constructor(private readonly input: AgentInput) {
    // Fixed for the whole run from the operator's input: nothing a model answer or a tool result
    // says can reach it (there is no code path from an observation to it).
    this.baseBudget = Object.freeze(resolveBudget(input.budget));
    const carried = input.carried;
    this.startedAtMs = carried?.started_at_ms ?? workflowInfo().runStartTime.getTime();
    this.state = loopStateOf(carried, input.principal);
    this.domain = domainOf(input);
    const info = workflowInfo();
    this.stateKey = stateKey(info.workflowId, info.firstExecutionRunId, this.domain.statePerConversation === true);
    this.omitted = carried?.omitted ? { ...carried.omitted } : { trace: 0, history: 0 };
    this.extensions = carried?.extensions ? [...carried.extensions] : [];
    const suggested = () => workflowInfo().continueAsNewSuggested;
    this.waits = new Waits(approvalTimeoutMs(input.approval_timeout_seconds), carried, suggested);
    const now = () => ({ running: this.final === undefined, step: this.state.usage.steps });
    this.conversation = new Conversation(input.conversation, carried, this.waits, now);
    this.decisions = new Decisions(input.llm_max_attempts ?? 3, {
      left: () => this.left(),
      cutOff: () => this.cut.isCutOff(),
      throwIfCutOff: () => this.cut.check(),
      charge: (attempts) => charge(this.state, attempts, recordAttempts),
    });
  }

  /** The budget now: the operator's, plus every top-up. */
  private get budget(): Budget {
    return this.extensions.length === 0 ? this.baseBudget : extendedBudget(this.baseBudget, this.extensions);
  }

  async execute(): Promise<AgentResult> {
    // The client set the attributes' initial values when it started the run (startRun); the
    // first step publishes the workflow's own, in the same workflow task.
    if (!this.input.carried) agentMetrics.runStarted();
    const clock = {
      startedAtMs: this.startedAtMs,
      humanWaitMs: () => this.waits.humanWaitMs,
      maxSeconds: () => this.budget.max_seconds,
      waiting: () => this.waits.waiting(),
    };
    // The MCP discovery is inside the race: a kill switch or a deadline during it ends the run as usual.
    const raced = await this.cut.race(clock, async () => {
      this.mcp = await joinMcpTools(this.input, this.domain);
      return runLoop(this.ports());
    });
    if ('result' in raced) return raced.result;
    if (raced.cut === 'max_seconds') return this.stop('max_seconds');
    // The operator's kill switch: end in Temporal's Canceled state, and leave the trace so far
    // where `agent result` can read it.
    const partial = this.stop('cancelled');
    upsertMemo({ [CANCELLED_RESULT_MEMO]: partial });
    throw raced.err;
  }

  /** The loop's ports: Temporal's activities, Updates and timers, and this run's records. */
  private ports(): LoopPorts<AgentResult> {
    const waitSeconds = this.input.topup_wait_seconds;
    return {
      state: this.state,
      input: this.mcp ? { ...this.input, allow: [...this.mcp.allow] } : this.input,
      domain: this.mcp?.domain ?? this.domain,
      registry: this.registry(),
      workflowId: workflowInfo().workflowId,
      stateKey: this.stateKey,
      stepsAtStart: this.input.carried?.usage.steps ?? 0,
      budget: () => this.budget,
      elapsedMs: () => this.agentElapsedMs(),
      continueAsNewSuggested: () => workflowInfo().continueAsNewSuggested,
      policy: (name, args) => this.principalPolicy(name, args),
      pricing: async () => (this.budget.max_usd > 0 ? this.pricing() : undefined),
      decide: (step, payload, cap, leftUsd, view) => this.decisions.decide(step, payload, cap, leftUsd, view),
      callTool: (call, key) => {
        const spec = this.registry()[call.name];
        return this.mcp && isMcpTool(spec)
          ? callMcpToolActivity(spec, this.mcp.config, call, key, this.state.principal, this.left())
          : callToolActivity(call, key, this.state.principal, this.left(), this.stateKey, this.state.store);
      },
      owner: (call) => {
        const spec = this.registry()[call.name];
        return this.mcp && isMcpTool(spec)
          ? ownerMcpActivity(spec, this.mcp.config, call, this.state.principal)
          : ownerActivity(call);
      },
      reconcile: (effect) => {
        this.setPhase('reconciling', effect.tool);
        const spec = this.registry()[effect.tool];
        return this.mcp && isMcpTool(spec)
          ? reconcileMcpActivity(spec, this.mcp.config, effect, this.state.principal)
          : reconcileActivity(effect, this.state.store);
      },
      pending: (fields) => this.waits.pending(fields),
      askPerson: (pending) => {
        this.setPhase('awaiting_approval', pending.tool ?? 'escalate', pending);
        const { workflowId } = workflowInfo();
        return this.waits.person(pending, approvalTimerSummary(pending, this.state.principal, workflowId));
      },
      conversation: this.conversation.port(() => this.setPhase('awaiting_customer')),
      ...(waitSeconds
        ? {
            topUp: {
              declined: () => this.waits.topupDeclined,
              wait: (reason: string) => {
                const granted = this.extensions.length;
                this.setPhase('awaiting_topup', reason);
                return this.waits.topUp(reason, waitSeconds, () => this.extensions.length > granted);
              },
              notNeeded: () => (this.waits.topupUntilMs = undefined),
            },
          }
        : {}),
      cutOff: { check: () => this.cut.check(), isCancellation },
      record: {
        step: () => agentMetrics.step(),
        toolCall: (tool, outcome) => agentMetrics.toolCall(tool, outcome),
        attempts: recordAttempts,
        publish: () =>
          publishStatus(this.input, this.state.usage, 'running', undefined, this.state.principal, this.mcp?.names),
        phase: (phase, tool) => this.setPhase(phase, tool),
        // Visible in `agent list` (the memo comes back with every listed run) while the run goes on.
        effects: (effects) => upsertMemo({ [EFFECTS_MEMO]: countEffects(effects) }),
      },
      end: {
        stop: (reason, extra) => this.stop(reason, extra),
        finish: (answer, validation) => this.finish(answer, validation),
        continueAsNew: () => this.continueAsNew(),
      },
    };
  }

  /** The run's tools by name: its domain's, and its MCP servers' when it has any. */
  private registry(): ToolRegistry {
    return this.mcp?.registry ?? registryOfDomain(this.domain);
  }

  private principalPolicy(name: string, args: Record<string, unknown>): PolicyDecision {
    return checkPrincipalPolicy(specOf(this.registry(), name), args, {
      principal: this.state.principal,
      history: this.state.history,
      nowMs: Date.now(),
      confirmedUsd: confirmedUsd(this.state.effects),
    });
  }

  private continueAsNew(): Promise<never> {
    const { state, waits } = this;
    state.trace = withWindDowns(state);
    const next = nextRunInput(
      this.input,
      {
        started_at_ms: this.startedAtMs,
        usage: state.usage,
        trace: state.trace,
        history: state.history,
        seen_calls: state.seenCalls,
        read_calls: state.reads,
        seen_since: state.seenSince,
        human_wait_ms: waits.humanWaitMs,
        effects: state.effects,
        omitted: this.omitted,
        conversation: this.conversation.carried(),
        ...this.conversation.carriedWaits(),
        principal: this.input.principal === undefined ? state.principal : undefined,
        authenticates: authenticatingTools(Object.values(this.registry())),
        store: state.store,
        fixed_chars: state.fixedChars,
      },
      { extensions: this.extensions, declined: waits.topupDeclined, untilMs: waits.topupUntilMs },
    );
    // The next run uses the tools this chain discovered at its start, never a new listing.
    if (this.mcp) next.carried = { ...next.carried!, mcp_discovery: this.mcp.discovery };
    // The next run keeps this one's workflow task timeout (the client's choice, see startRun).
    return makeContinueAsNewFunc<typeof reactAgent>({ workflowTaskTimeout: workflowInfo().taskTimeoutMs })(next);
  }

  /** What is left of the budget right now (the activity summaries show it). */
  private left(): Remaining {
    return remaining(this.budget, { ...this.state.usage, elapsed_ms: this.agentElapsedMs() });
  }

  /** Wall time since the run started, minus time spent waiting for people. */
  private agentElapsedMs(): number {
    const now = Date.now();
    return now - this.startedAtMs - this.waits.humanWaitMs - this.waits.waitingNowMs(now);
  }

  private setPhase(phase: Phase, tool?: string, pending?: PendingApproval): void {
    this.phase = phase;
    this.currentTool = tool;
    const { usage, principal } = this.state;
    const where = { workflowId: workflowInfo().workflowId, principal, pending };
    this.showDetails(phaseDetails({ phase, tool, usage, budget: this.budget, ...where }));
  }

  /** The Web UI's current details: `head` (the phase or the ending), then a conversation's turns. */
  private showDetails(head: string = this.detailsHead): void {
    this.detailsHead = head;
    const transcript = this.conversation.carried();
    const customer = this.phase === 'awaiting_customer' ? this.waits.customer : undefined;
    const view = { workflowId: workflowInfo().workflowId, awaitingUntilMs: customer?.expiresMs, nowMs: Date.now() };
    setCurrentDetails(transcript ? conversationDetails(head, { transcript, ...view }) : head);
  }

  /** The `say` Update: the customer's turn joins the transcript and shows in the details at once. */
  say(message: SayRequest): SayReceipt {
    const receipt = this.conversation.say(message);
    this.showDetails();
    return receipt;
  }

  private finish(answer: string, validation: FinalValidation): AgentResult {
    return this.end({ status: 'ok', stop_reason: 'success', answer, validation });
  }

  /** A reason of the success family (the customer ended the conversation) is an ok ending. */
  private stop(reason: StopReason, extra: Partial<AgentResult> = {}): AgentResult {
    const status = stopReasonFamily(reason) === 'success' ? 'ok' : 'stopped';
    return this.end({ status, stop_reason: reason, ...extra });
  }

  private end(ending: Ending): AgentResult {
    const { state } = this;
    state.usage = { ...state.usage, elapsed_ms: this.agentElapsedMs() };
    const conversation = this.conversation.carried();
    const totals = { budget: this.budget, omitted: this.omitted, extensions: this.extensions, conversation };
    this.final = resultOf(ending, state, totals);
    this.phase = 'done';
    this.currentTool = undefined;
    const status: RunStatus = ending.stop_reason === 'cancelled' ? 'cancelled' : ending.status;
    publishStatus(this.input, state.usage, status, ending.stop_reason, state.principal, this.mcp?.names);
    agentMetrics.runEnded(status, ending.stop_reason);
    const details = `ended: ${ending.stop_reason} after ${state.usage.steps} step(s)`;
    this.showDetails(details + costDetails(state.usage, this.budget));
    return this.final;
  }

  /** The model_view Query: the run as its decide activity renders it for the model (common/model-view/model-view.ts). */
  modelView(ref?: ViewRef): ViewSource {
    const domain = this.mcp?.domain ?? this.domain;
    const source = viewSourceOf(
      this.input,
      domain,
      this.state.history,
      this.conversation.carried(),
      this.state.principal,
    );
    return viewForQuery(source, this.registry(), ref);
  }

  snapshot(): AgentState {
    const { state, waits } = this;
    const usage = this.final ? state.usage : { ...state.usage, elapsed_ms: this.agentElapsedMs() };
    return stateOf({
      phase: this.phase,
      tool: this.currentTool,
      final: this.final,
      state,
      usage,
      budget: this.budget,
      awaiting: waits.awaiting,
      topup: waits.topup,
      extensions: this.extensions,
      conversation: this.conversation.state(),
      clock: { nowMs: Date.now(), running: !waits.waiting() },
    });
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
    // Validators do not run on replay: the handler checks again (same state, same outcome).
    this.validateExtend(request);
    this.extensions = [...this.extensions, grantOf(request, this.state.usage.steps)];
    return { budget: this.budget, extensions: this.extensions.length };
  }
}
