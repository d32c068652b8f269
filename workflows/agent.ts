// The ReAct loop as a Temporal workflow. It owns the state, the budgets and the policy checks;
// every LLM decision and every tool call is an activity. Deterministic code only.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ActivityCancellationType,
  TimeoutFailure,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { DecideInput, DecideOutput, ToolInput } from './types';
import { addTokens, budgetExhausted, EMPTY_USAGE, remaining, resolveBudget } from './budget';
import type { Budget, Usage } from './budget';
import { validateAction } from './contract';
import type { Action } from './contract';
import { buildDecisionPayload } from './decision-payload';
import { checkToolCall } from './gateway';
import { decideKey, toolKey } from './idempotency';
import { stateQuery } from './queries';
import { toolStop } from './stop-reasons';
import type { StopReason } from './stop-reasons';
import { TOOL_REGISTRY } from './tool-catalog';
import { LLM_REJECTED, LLM_TIMEOUT } from './types';
import type { AgentInput, AgentResult, AgentState, HistoryEntry, Observation, Phase, TraceEntry } from './types';
import { boundedRaw } from './bounded';

type DecideFn = (input: DecideInput) => Promise<DecideOutput>;
type ToolFn = (input: ToolInput) => Promise<Observation>;

/** Memo key under which a cancelled run leaves its partial result (a Canceled run has no result). */
export const CANCELLED_RESULT_MEMO = 'agent_result';

const DEFAULT_CONTINUE_AS_NEW_EVERY = 100;

export async function reactAgent(input: AgentInput): Promise<AgentResult> {
  const run = new AgentRun(input);
  setHandler(stateQuery, () => run.snapshot());
  return run.execute();
}

class AgentRun {
  private readonly budget: Budget;
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

  constructor(private readonly input: AgentInput) {
    this.budget = resolveBudget(input.budget);
    this.allow = [...(input.allow ?? [])];
    const carried = input.carried;
    this.startedAtMs = carried?.started_at_ms ?? workflowInfo().runStartTime.getTime();
    this.usage = carried ? { ...carried.usage } : { ...EMPTY_USAGE };
    this.trace = carried ? [...carried.trace] : [];
    this.history = carried ? [...carried.history] : [];
    this.seenCalls = carried ? [...carried.seen_calls] : [];
    this.stepsAtStart = this.usage.steps;
  }

  async execute(): Promise<AgentResult> {
    // max_seconds is a workflow timer racing the loop, so a slow LLM call is cut off at the
    // deadline rather than noticed after it returns.
    const loop = new CancellationScope();
    let deadlineHit = false;
    const deadlineMs = this.startedAtMs + this.budget.max_seconds * 1000;
    void sleep(Math.max(1, deadlineMs - Date.now())).then(
      () => {
        deadlineHit = true;
        loop.cancel();
      },
      () => undefined, // the workflow itself was cancelled: handled below
    );

    try {
      return await loop.run(() => this.loop());
    } catch (err) {
      if (!isCancellation(err)) throw err;
      if (deadlineHit && !CancellationScope.current().consideredCancelled) {
        return this.stop('max_seconds');
      }
      // The operator's kill switch: end in Temporal's Canceled state, and leave the trace so far
      // where `agent result` can read it.
      const partial = this.stop('cancelled');
      upsertMemo({ [CANCELLED_RESULT_MEMO]: partial });
      throw err;
    }
  }

  private async loop(): Promise<AgentResult> {
    const canEvery = this.input.continue_as_new_every ?? DEFAULT_CONTINUE_AS_NEW_EVERY;
    for (;;) {
      this.tick();
      const exhausted = budgetExhausted(this.budget, this.usage);
      if (exhausted) return this.stop(exhausted);
      if (this.usage.steps - this.stepsAtStart >= canEvery || workflowInfo().continueAsNewSuggested) {
        return this.continueAsNew();
      }

      const step = this.usage.steps + 1;
      this.usage = { ...this.usage, steps: step };
      this.setPhase('deciding');

      const decision = await this.decide(step);
      if ('stop' in decision) return this.stop(decision.stop);
      this.usage = addTokens(this.usage, decision.usage);

      const validation = validateAction(decision.text);
      if (!validation.ok) {
        return this.stop(`invalid_action:${validation.reason}`, { raw_action: boundedRaw(validation.raw) });
      }
      const action = validation.action;
      this.lastAction = action;
      if (action.kind === 'final') return this.finish(action.answer);

      const gate = checkToolCall(action.name, action.args, {
        maxToolCalls: this.budget.max_tool_calls,
        allow: this.allow,
        registry: TOOL_REGISTRY,
        toolCalls: this.usage.tool_calls,
        seenCalls: this.seenCalls,
      });
      if (!gate.allowed) {
        this.trace.push({ step, tool: action.name, args_hash: gate.argsHash, ok: false, stop_reason: gate.reason });
        return this.stop(gate.reason);
      }

      this.usage = { ...this.usage, tool_calls: this.usage.tool_calls + 1 };
      this.seenCalls.push(gate.signature);
      this.setPhase('calling_tool', gate.name);
      let observation: Observation;
      try {
        observation = await this.callTool(step, gate.name, gate.args, gate.argsHash);
      } catch (err) {
        if (isCancellation(err)) throw err;
        const reason = toolStop.error(gate.name);
        this.trace.push({ step, tool: gate.name, args_hash: gate.argsHash, ok: false, stop_reason: reason });
        return this.stop(reason);
      }
      this.trace.push({ step, tool: gate.name, args_hash: gate.argsHash, ok: true });
      this.history.push({ step, action: { kind: 'tool', name: gate.name, args: gate.args }, observation });
    }
  }

  private async decide(step: number): Promise<DecideOutput | { stop: StopReason }> {
    const { decide } = proxyActivities<{ decide: DecideFn }>({
      activityId: `${step}-decide`,
      summary: `step ${step}: decide`,
      // Per-attempt cap is the HTTP client's timeout (OPENAI_TIMEOUT_SECONDS, worker side);
      // this is the backstop. A short heartbeat timeout notices a dead worker in seconds.
      startToCloseTimeout: '5 minutes',
      heartbeatTimeout: '2 seconds',
      // Wait for the activity to confirm, so a cancelled run has really aborted its LLM request.
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: {
        initialInterval: '1 second',
        backoffCoefficient: 2,
        maximumInterval: '20 seconds',
        maximumAttempts: this.input.llm_max_attempts ?? 3,
        nonRetryableErrorTypes: [LLM_REJECTED],
      },
    });
    const payload = buildDecisionPayload(this.input.goal, this.input.user_id, this.history, this.allow);
    try {
      return await decide({ payload, idempotency_key: decideKey(workflowInfo().workflowId, step) });
    } catch (err) {
      if (isCancellation(err)) throw err;
      return { stop: classifyLlmFailure(err) };
    }
  }

  private async callTool(step: number, name: string, args: Record<string, unknown>, hash: string): Promise<Observation> {
    const spec = TOOL_REGISTRY[name]!;
    const tools = proxyActivities<Record<string, ToolFn>>({
      activityId: `${step}-${name}`,
      summary: `step ${step}: ${name} (${hash})`,
      startToCloseTimeout: `${spec.timeoutSeconds} seconds`,
      // Read-only and short: a cancel need not wait for the tool to acknowledge.
      cancellationType: ActivityCancellationType.TRY_CANCEL,
      retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumAttempts: spec.maxAttempts },
    });
    const tool = tools[name]!;
    return tool({
      args,
      idempotency_key: toolKey(workflowInfo().workflowId, step, name, hash),
      principal_user_id: this.input.user_id,
    });
  }

  private continueAsNew(): Promise<never> {
    return continueAsNew<typeof reactAgent>({
      ...this.input,
      carried: {
        started_at_ms: this.startedAtMs,
        usage: this.usage,
        trace: this.trace,
        history: this.history,
        seen_calls: this.seenCalls,
      },
    });
  }

  private tick(): void {
    this.usage = { ...this.usage, elapsed_ms: Date.now() - this.startedAtMs };
  }

  private setPhase(phase: Phase, tool?: string): void {
    this.phase = phase;
    this.currentTool = tool;
    const what = phase === 'calling_tool' ? `calling ${tool}` : phase;
    setCurrentDetails(`step ${this.usage.steps}/${this.budget.max_steps}: ${what}`);
  }

  private finish(answer: string): AgentResult {
    return this.end({ status: 'ok', stop_reason: 'success', answer });
  }

  private stop(reason: StopReason, extra: Partial<AgentResult> = {}): AgentResult {
    return this.end({ status: 'stopped', stop_reason: reason, ...extra });
  }

  private end(fields: Pick<AgentResult, 'status' | 'stop_reason'> & Partial<AgentResult>): AgentResult {
    this.tick();
    this.final = {
      ...fields,
      trace: this.trace,
      history: this.history,
      usage: this.usage,
      budget: this.budget,
    };
    this.phase = 'done';
    this.currentTool = undefined;
    setCurrentDetails(`ended: ${fields.stop_reason} after ${this.usage.steps} step(s)`);
    return this.final;
  }

  snapshot(): AgentState {
    const usage = this.final ? this.usage : { ...this.usage, elapsed_ms: Date.now() - this.startedAtMs };
    return {
      phase: this.phase,
      step: this.usage.steps,
      status: this.final ? this.final.status : 'running',
      stop_reason: this.final?.stop_reason,
      current_tool: this.currentTool,
      last_action: this.lastAction,
      usage,
      budget: this.budget,
      remaining: remaining(this.budget, usage),
      trace: this.trace,
    };
  }
}

/** An LLM decision that failed for good: timeouts (ours or Temporal's) vs. everything else. */
function classifyLlmFailure(err: unknown): StopReason {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) return 'llm_timeout';
  if (cause instanceof ApplicationFailure && cause.type === LLM_TIMEOUT) return 'llm_timeout';
  return 'llm_error';
}
