// The ReAct loop as a Temporal workflow: its entry point and its state. The loop itself is
// runLoop (run-loop.ts), run here with Temporal behind its ports; every LLM decision and every tool
// call is an activity. Its messages are handled in handlers.ts, its budget and top-ups are
// top-ups.ts', what it shows it is doing is phase.ts'. Deterministic code only.
import {
  isCancellation,
  makeContinueAsNewFunc,
  setWorkflowOptions,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { remaining } from '../../common/cost/budget';
import type { Remaining } from '../../common/cost/budget';
import { approvalTimeoutMs } from '../../common/conversation/approvals';
import type { PendingApproval } from '../../common/conversation/approvals';
import { viewForQuery, viewSourceOf } from '../../common/model-view/model-view';
import type { ViewRef, ViewSource } from '../../common/model-view/model-view';
import type { SayReceipt, SayRequest } from '../../common/conversation/conversation';
import { stopReasonFamily } from '../../common/stop-reasons';
import type { StopReason } from '../../common/stop-reasons';
import { CANCELLED_RESULT_MEMO, EFFECTS_MEMO } from '../../common/types';
import type { AgentInput, AgentResult, AgentState, FinalValidation, Phase } from '../../common/types';
import { agentMetrics, recordAttempts } from '../../common/temporal/metrics-sink';
import type { RunStatus } from '../../common/temporal/search-attributes';
import { loopStateOf, nextRunInput } from './carry';
import { setAgentHandlers } from './handlers';
import { TopUps } from './top-ups';
import { RunPhase } from './phase';
import { authenticatingTools } from '../../common/conversation/authentication-entry';
import { CutOff } from './cut-off';
import { checkEntry } from './entry';
import { Conversation } from '../conversation/conversation';
import { Decisions, workerPricing } from '../calls/decide-call';
import { countEffects } from './effects';
import { domainOf, registryOfDomain } from '../../domains/index';
import { stateKey } from './idempotency';
import type { Domain } from '../../common/domain';
import type { ToolRegistry } from '../../common/tools/tool-catalog';
import { runPolicy } from './policy';
import { charge, runLoop } from './run-loop';
import type { LoopPorts, LoopState } from './run-loop';
import { approvalTimerSummary, costDetails, stateOf } from '../reporting/run-details';
import { publishStatus, resultOf, withWindDowns } from './run-result';
import { logRunEnded, logRunStarted } from '../reporting/run-log';
import type { Ending } from './run-result';
import { Waits } from '../conversation/waits';
import { publishWaiting } from './waiting-attribute';
import type { WaitKind } from '../../common/temporal/waiting';
import { joinMcpTools } from '../mcp/run';
import { toolBackends } from '../calls/tool-backend';
import type { McpRun } from '../mcp/run';

export async function reactAgent(input: AgentInput): Promise<AgentResult> {
  checkEntry(input);
  const run = new AgentRun(input);
  setAgentHandlers(run);
  return run.execute();
}

// A bug in workflow code (any plain Error) fails the run with that error instead of failing its
// workflow task, which Temporal would retry forever: a run no cancel could end.
setWorkflowOptions({ failureExceptionTypes: [Error] }, reactAgent);

class AgentRun {
  private readonly startedAtMs: number;
  private readonly state: LoopState;
  private readonly domain: Domain;
  private readonly stateKey: string;
  /** The run's MCP servers' tools, joined to its domain at its start; absent without MCP servers. */
  private mcp: McpRun | undefined;
  readonly waits: Waits;
  readonly decisions: Decisions;
  readonly conversation: Conversation;
  private readonly phase: RunPhase;
  private final: AgentResult | undefined;
  private readonly cut = new CutOff();
  private readonly omitted: { trace: number; history: number };
  readonly topUps: TopUps;
  /** The worker's model and price (llm_pricing), asked once when the run first has a dollar budget. */
  private readonly pricing = workerPricing();

  constructor(private readonly input: AgentInput) {
    const carried = input.carried;
    this.startedAtMs = carried?.started_at_ms ?? workflowInfo().runStartTime.getTime();
    this.state = loopStateOf(carried, input.principal);
    this.domain = domainOf(input);
    const info = workflowInfo();
    this.stateKey = stateKey(info.workflowId, info.firstExecutionRunId, this.domain.statePerConversation === true);
    this.omitted = carried?.omitted ? { ...carried.omitted } : { trace: 0, history: 0 };
    const suggested = () => workflowInfo().continueAsNewSuggested;
    const waiting = (kind: WaitKind) => publishWaiting(input.search_attributes, kind);
    this.waits = new Waits(approvalTimeoutMs(input.approval_timeout_seconds), carried, suggested, waiting);
    const now = () => ({ running: this.final === undefined, step: this.state.usage.steps });
    this.topUps = new TopUps(input, now);
    this.conversation = new Conversation(input.conversation, carried, this.waits, now);
    this.phase = new RunPhase(this.conversation, this.waits);
    this.decisions = new Decisions(input.llm_max_attempts ?? 3, {
      left: () => this.left(),
      cutOff: () => this.cut.isCutOff(),
      throwIfCutOff: () => this.cut.check(),
      charge: (attempts) => charge(this.state, attempts, recordAttempts),
      view: (ref) => this.modelView(ref),
    });
  }

  async execute(): Promise<AgentResult> {
    // The client set the attributes' initial values when it started the run (startRun); the
    // first step publishes the workflow's own, in the same workflow task.
    if (!this.input.carried) {
      agentMetrics.runStarted();
      logRunStarted(this.domain.name, this.state.principal);
    }
    // A next run of a chain: what it waits for is its own to say (a wait handed on, or none).
    publishWaiting(this.input.search_attributes, this.waits.kind());
    const clock = {
      startedAtMs: this.startedAtMs,
      humanWaitMs: () => this.waits.humanWaitMs,
      maxSeconds: () => this.topUps.budget.max_seconds,
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
    const backend = toolBackends(this.registry(), this.mcp?.config, {
      stateKey: this.stateKey,
      principal: () => this.state.principal,
      store: () => this.state.store,
      left: () => this.left(),
    });
    return {
      state: this.state,
      input: this.mcp ? { ...this.input, allow: [...this.mcp.allow] } : this.input,
      domain: this.mcp?.domain ?? this.domain,
      registry: this.registry(),
      workflowId: workflowInfo().workflowId,
      stateKey: this.stateKey,
      stepsAtStart: this.input.carried?.usage.steps ?? 0,
      budget: () => this.topUps.budget,
      elapsedMs: () => this.agentElapsedMs(),
      continueAsNewSuggested: () => workflowInfo().continueAsNewSuggested,
      policy: (name, args) => runPolicy(this.registry(), this.state, name, args),
      pricing: async () => (this.topUps.budget.max_usd > 0 ? this.pricing() : undefined),
      decide: (step, payload, cap, leftUsd, view) => this.decisions.decide(step, payload, cap, leftUsd, view),
      callTool: (call, key) => backend(call.name).call(call, key),
      owner: (call) => backend(call.name).owner(call),
      reconcile: (effect) => {
        this.setPhase('reconciling', effect.tool);
        return backend(effect.tool).reconcile(effect);
      },
      pending: (fields) => this.waits.pending(fields),
      askPerson: (pending) => {
        this.setPhase('awaiting_approval', pending.tool ?? 'escalate', pending);
        const { workflowId } = workflowInfo();
        return this.waits.person(pending, approvalTimerSummary(pending, this.state.principal, workflowId));
      },
      conversation: this.conversation.port(() => this.setPhase('awaiting_customer')),
      ...this.topUpPort(),
      cutOff: { check: () => this.cut.check(), isCancellation },
      record: this.recordPort(),
      end: {
        stop: (reason, extra) => this.stop(reason, extra),
        finish: (answer, validation) => this.finish(answer, validation),
        continueAsNew: () => this.continueAsNew(),
      },
    };
  }

  /** Waiting for an operator's top-up when a budget runs low (topup_wait_seconds); without it, never. */
  private topUpPort(): Pick<LoopPorts<AgentResult>, 'topUp'> {
    const waitSeconds = this.input.topup_wait_seconds;
    if (!waitSeconds) return {};
    const topUp = {
      declined: () => this.waits.topupDeclined,
      wait: (reason: string) => {
        const granted = this.topUps.extensions.length;
        this.setPhase('awaiting_topup', reason);
        return this.waits.topUp(reason, waitSeconds, () => this.topUps.extensions.length > granted);
      },
      notNeeded: () => this.waits.topupNotNeeded(),
    };
    return { topUp };
  }

  private recordPort(): LoopPorts<AgentResult>['record'] {
    return {
      step: () => agentMetrics.step(),
      toolCall: (tool, outcome) => agentMetrics.toolCall(tool, outcome),
      attempts: recordAttempts,
      publish: () =>
        publishStatus(this.input, this.state.usage, 'running', undefined, this.state.principal, this.mcp?.names),
      phase: (phase, tool) => this.setPhase(phase, tool),
      // Visible in `agent list` (the memo comes back with every listed run) while the run goes on.
      effects: (effects) => upsertMemo({ [EFFECTS_MEMO]: countEffects(effects) }),
    };
  }

  /** The run's tools by name: its domain's, and its MCP servers' when it has any. */
  private registry(): ToolRegistry {
    return this.mcp?.registry ?? registryOfDomain(this.domain);
  }

  private continueAsNew(): Promise<never> {
    const { state, waits } = this;
    state.trace = withWindDowns(state);
    const next = nextRunInput(this.input, state, {
      startedAtMs: this.startedAtMs,
      waits,
      omitted: this.omitted,
      conversation: { transcript: this.conversation.carried(), ...this.conversation.carriedWaits() },
      authenticates: authenticatingTools(Object.values(this.registry())),
      extensions: this.topUps.extensions,
    });
    // The next run uses the tools this chain discovered at its start, never a new listing.
    if (this.mcp) next.carried = { ...next.carried!, mcp_discovery: this.mcp.discovery };
    // The next run keeps this one's workflow task timeout (the client's choice, see startRun).
    return makeContinueAsNewFunc<typeof reactAgent>({ workflowTaskTimeout: workflowInfo().taskTimeoutMs })(next);
  }

  /** What is left of the budget right now (the activity summaries show it). */
  private left(): Remaining {
    return remaining(this.topUps.budget, { ...this.state.usage, elapsed_ms: this.agentElapsedMs() });
  }

  /** Wall time since the run started, minus time spent waiting for people. */
  private agentElapsedMs(): number {
    const now = Date.now();
    return now - this.startedAtMs - this.waits.humanWaitMs - this.waits.waitingNowMs(now);
  }

  private setPhase(phase: Phase, tool?: string, pending?: PendingApproval): void {
    const { usage, principal } = this.state;
    this.phase.set(phase, tool, { usage, budget: this.topUps.budget, principal, pending });
  }

  /** The `say` Update: the customer's turn joins the transcript and shows in the details at once. */
  say(message: SayRequest): SayReceipt {
    const receipt = this.conversation.say(message);
    this.phase.show();
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
    const totals = {
      budget: this.topUps.budget,
      omitted: this.omitted,
      extensions: this.topUps.extensions,
      conversation,
    };
    this.final = resultOf(ending, state, totals);
    const status: RunStatus = ending.stop_reason === 'cancelled' ? 'cancelled' : ending.status;
    publishStatus(this.input, state.usage, status, ending.stop_reason, state.principal, this.mcp?.names);
    publishWaiting(this.input.search_attributes, 'none');
    agentMetrics.runEnded(status, ending.stop_reason);
    logRunEnded({
      domain: this.domain.name,
      principal: state.principal,
      status,
      stopReason: ending.stop_reason,
      usage: state.usage,
    });
    const details = `ended: ${ending.stop_reason} after ${state.usage.steps} step(s)`;
    this.phase.ended(details + costDetails(state.usage, this.topUps.budget));
    return this.final;
  }

  /** The model_view Query: the run as its decide activity renders it for the model (common/model-view/model-view.ts). */
  modelView(ref?: ViewRef): ViewSource {
    const { history, principal } = this.state;
    const domain = this.mcp?.domain ?? this.domain;
    // As the plan saw it: turns that came (or were dropped) since do not change a decision's view.
    const transcript = ref ? this.conversation.asOf(ref.turns) : this.conversation.carried();
    const source = viewSourceOf(this.input, domain, history, transcript, principal);
    return viewForQuery(source, this.registry(), ref);
  }

  snapshot(): AgentState {
    const { state, waits } = this;
    const usage = this.final ? state.usage : { ...state.usage, elapsed_ms: this.agentElapsedMs() };
    return stateOf({
      phase: this.phase.phase,
      tool: this.phase.tool,
      final: this.final,
      state,
      usage,
      budget: this.topUps.budget,
      awaiting: waits.awaiting,
      topup: waits.topup,
      extensions: this.topUps.extensions,
      conversation: this.conversation.state(),
      clock: { nowMs: Date.now(), running: !waits.waiting() },
    });
  }
}
