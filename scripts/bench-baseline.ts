// The baseline the benchmark compares the durable workflow with: the agent's loop without Temporal.
// Every decision is the workflow's own code (workflows/step.ts: budgets, continue-as-new, action
// contract, gateway with the principal policy, approvals, trace and history entries), and so are the
// decision payload and idempotency keys. The same activity functions (createActivities: the `openai`
// client for decide, the seed-data tools) are called directly, each in an activity Context as the
// worker would give it, so the HTTP calls are byte for byte the same. What it lacks is what Temporal
// adds: no server round trips, no history, no timers, no retries, no recovery. Nobody answers an
// approval here: a call that needs one, or an escalation, ends as the workflow's does when nobody
// answers in time (approval_timeout), without the wait. Continue-as-new keeps the run in place with
// the bounded state the workflow would carry.
//
// Run as a child process by scripts/bench.ts (IPC: {type:'run', ...} -> {type:'done', ...}), so
// it gets its own event loop and CPU accounting, like the worker process it is compared with.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../activities';
import { SEED_DATA } from '../activities/tools/seed-data';
import { llmConfigFromEnv } from '../activities/llm-config';
import { addTokens, EMPTY_USAGE, resolveBudget } from '../common/budget';
import type { Usage } from '../common/budget';
import { escalationApprovalId, toolCallApprovalId } from '../common/approvals';
import type { PendingApproval } from '../common/approvals';
import { buildDecisionPayload } from '../common/decision-payload';
import type { StepRole, Tagged } from '../common/step-tag';
import type { StopReason } from '../common/stop-reasons';
import { TOOL_REGISTRY } from '../common/tool-catalog';
import { LLM_TIMEOUT } from '../common/types';
import type { AgentInput, EffectEntry, HistoryEntry, Observation, ToolInput, TraceEntry } from '../common/types';
import { carryState } from '../workflows/carry';
import { confirmedUsd, effectFromObservation } from '../workflows/effects';
import { decideKey, toolKey } from '../workflows/idempotency';
import { checkPrincipalPolicy } from '../workflows/policy';
import { approvalMove, decideMove, escalationMove, startStep, toolAnswered, toolFailedMove } from '../workflows/step';
import type { StepCounters, StepRules, StopMove } from '../workflows/step';
import { readStats } from './bench-stats';

type Activities = ReturnType<typeof createActivities>;
type ToolFn = (input: Tagged<ToolInput>) => Promise<Observation>;

/** The workflow's default (workflows/agent.ts). */
const DEFAULT_CONTINUE_AS_NEW_EVERY = 100;

export interface InProcessResult {
  status: 'ok' | 'stopped';
  stop_reason: StopReason;
  answer?: string;
  trace: TraceEntry[];
  history: HistoryEntry[];
  usage: Usage;
}

/** Runs an activity function the way the worker does: inside an activity Context of its own. */
function inContext<A, R>(fn: (arg: A) => Promise<R>, arg: A, activityId: string, workflowId: string): Promise<R> {
  const env = new MockActivityEnvironment({
    activityId,
    heartbeatTimeoutMs: 2000,
    workflowExecution: { workflowId, runId: 'in-process' },
  });
  return env.run(fn, arg);
}

/** A wait for a person that nobody answers: what the workflow shows while it waits. */
function unanswered(fields: Omit<PendingApproval, 'requested_at' | 'expires_at'>): PendingApproval {
  const now = new Date().toISOString();
  return { ...fields, requested_at: now, expires_at: now };
}

export async function runInProcess(
  activities: Activities,
  workflowId: string,
  input: AgentInput,
): Promise<InProcessResult> {
  const budget = resolveBudget(input.budget);
  const startedAt = Date.now();
  // The workflow's decide key holds its chain's first run id (a UUID): the same shape here.
  const chainRunId = randomUUID();
  let state: StepCounters = { usage: { ...EMPTY_USAGE }, seenCalls: [] };
  let trace: TraceEntry[] = [];
  let history: HistoryEntry[] = [];
  const effects: EffectEntry[] = [];
  let stepsAtStart = 0;
  const rules: StepRules = {
    budget,
    allow: [...input.allow],
    policy: (name, args) =>
      checkPrincipalPolicy(name, args, {
        principalUserId: input.user_id,
        history,
        nowMs: Date.now(),
        confirmedRefundsUsd: confirmedUsd(effects),
      }),
  };
  const run = <A, R>(fn: (arg: Tagged<A>) => Promise<R>, arg: A, step: number, role: StepRole, id: string) =>
    inContext(fn, { ...arg, trace: { step, role } }, `${step}-${id}`, workflowId);
  const end = (status: 'ok' | 'stopped', stop_reason: StopReason, answer?: string): InProcessResult => ({
    status,
    stop_reason,
    ...(answer !== undefined ? { answer } : {}),
    trace,
    history,
    usage: { ...state.usage, elapsed_ms: Date.now() - startedAt },
  });
  const stop = (move: StopMove): InProcessResult => {
    if (move.trace) trace.push(move.trace);
    return end('stopped', move.reason);
  };

  for (;;) {
    const usage = { ...state.usage, elapsed_ms: Date.now() - startedAt };
    state = { ...state, usage };
    const start = startStep(budget, usage, {
      stepsAtStart,
      every: input.continue_as_new_every ?? DEFAULT_CONTINUE_AS_NEW_EVERY,
      suggested: false,
    });
    if (start.next === 'stop') return end('stopped', start.reason);
    if (start.next === 'continue_as_new') {
      const carried = carryState({
        started_at_ms: startedAt,
        usage,
        trace,
        history,
        seen_calls: state.seenCalls,
        human_wait_ms: 0,
        effects,
        omitted: { trace: 0, history: 0 },
      });
      ({ trace, history } = carried);
      state = { usage, seenCalls: carried.seen_calls };
      stepsAtStart = usage.steps;
      continue;
    }
    const { step } = start;
    state = { ...state, usage: start.usage };

    const payload = buildDecisionPayload(input.goal, input.user_id, history, rules.allow);
    let decision;
    try {
      const key = decideKey(workflowId, chainRunId, step);
      decision = await run(activities.decide, { payload, idempotency_key: key }, step, 'decide', 'decide');
    } catch (err) {
      return end(
        'stopped',
        err instanceof ApplicationFailure && err.type === LLM_TIMEOUT ? 'llm_timeout' : 'llm_error',
      );
    }
    state = { ...state, usage: addTokens(state.usage, decision.usage) };

    const move = decideMove(decision, step, state, rules);
    if (move.next === 'stop') return stop(move);
    if (move.next === 'finish') return end('ok', 'success', move.action.answer);
    if (move.next === 'escalate') {
      const pending = unanswered({
        id: escalationApprovalId(step),
        kind: 'escalation',
        step,
        reason: move.action.reason,
      });
      const answered = escalationMove(pending, move.action, undefined);
      if (answered.next === 'stop') return stop(answered);
      continue;
    }

    state = move.counters;
    const { call } = move;
    if (move.needsApproval) {
      const id = toolCallApprovalId(step, call.name, call.argsHash);
      const pending = unanswered({
        id,
        kind: 'tool_call',
        step,
        tool: call.name,
        args: call.args,
        args_hash: call.argsHash,
      });
      // Nobody answers here, so the move is the timeout's stop.
      const answered = approvalMove(call, pending, undefined, () => rules.policy(call.name, call.args));
      if (answered.next === 'stop') return stop(answered);
      if (answered.next === 'rejected') {
        trace.push(answered.trace);
        history.push(answered.history);
        continue;
      }
    }
    const tool = (activities as unknown as Record<string, ToolFn>)[call.name]!;
    const idempotency_key = toolKey(workflowId, step, call.name, call.argsHash);
    let observation: Observation;
    try {
      const toolInput = { args: call.args, idempotency_key, principal_user_id: input.user_id };
      observation = await run(tool, toolInput, step, 'tool', call.name);
    } catch {
      return stop(toolFailedMove(call, undefined));
    }
    const answered = toolAnswered(call, undefined, observation, Date.now());
    trace.push(answered.trace);
    history.push(answered.history);
    if (TOOL_REGISTRY[call.name]!.effectful) {
      effects.push(effectFromObservation({ tool: call.name, idempotency_key, step, args: call.args }, observation));
    }
  }
}

// ---- child-process entry (scripts/bench.ts forks this file) --------------------------------

export interface InProcessRequest {
  type: 'run';
  workflowId: string;
  input: AgentInput;
}

export interface InProcessReply {
  type: 'done';
  workflowId: string;
  ms: number;
  stop_reason: string;
  steps: number;
  error?: string;
}

if (require.main === module && process.send) {
  // The same environment-driven config the worker process uses (scripts/bench-worker.ts).
  const activities = createActivities({ llm: llmConfigFromEnv(), data: async () => SEED_DATA });
  process.on('message', (msg: InProcessRequest | { type: 'stats' }) => {
    if (msg?.type === 'stats') {
      process.send!(readStats());
      return;
    }
    if (msg?.type !== 'run') return;
    const t0 = performance.now();
    runInProcess(activities, msg.workflowId, msg.input).then(
      (r) =>
        process.send!({
          type: 'done',
          workflowId: msg.workflowId,
          ms: performance.now() - t0,
          stop_reason: r.stop_reason,
          steps: r.usage.steps,
        } satisfies InProcessReply),
      (err: unknown) =>
        process.send!({
          type: 'done',
          workflowId: msg.workflowId,
          ms: performance.now() - t0,
          stop_reason: 'error',
          steps: 0,
          error: String(err),
        } satisfies InProcessReply),
    );
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready' });
}
