// The baseline the benchmark compares the durable workflow with: the agent's loop without Temporal.
// It runs the workflow's own loop (runLoop, workflows/agent/run-loop.ts: budgets and cost planning,
// continue-as-new, action contract, gateway with the principal policy, approvals, the final
// validator, trace and history entries), with in-process ports: the same activity functions
// (createActivities: the `openai` client for decide, the seed-data tools) are called directly, each
// in an activity Context as the worker would give it, so the HTTP calls are byte for byte the same.
// What it lacks is what Temporal adds: no server round trips, no history, no timers, no retries, no
// recovery. Nobody answers an approval here: a call that needs one, or an escalation, ends as the
// workflow's does when nobody answers in time (approval_timeout), without the wait; nobody tops up
// a budget either. Continue-as-new keeps the run in place with the bounded state the workflow would
// carry.
//
// Run as a child process by bench/main.ts (IPC: {type:'run', ...} -> {type:'done', ...}), so
// it gets its own event loop and CPU accounting, like the worker process it is compared with.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../activities';
import { SEED_DATA } from '../domains/support/seed-data';
import { llmConfigFromEnv } from '../activities/decide/llm-config';
import { EMPTY_USAGE, resolveBudget } from '../common/cost/budget';
import type { Usage } from '../common/cost/budget';
import { ledgerOf } from '../common/cost/cost';
import type { LlmPricing } from '../common/cost/cost';
import type { StepRole, Tagged } from '../common/temporal/step-tag';
import type { StopReason } from '../common/stop-reasons';
import { llmFailureStop } from '../common/temporal/llm-failure-stop';
import type { AgentInput, DecideOutput, HistoryEntry, Observation, ToolInput, TraceEntry } from '../common/types';
import { carryInPlace } from '../workflows/agent/carry';
import { confirmedUsd, effectFromReconcile } from '../workflows/agent/effects';
import { decideKey } from '../workflows/agent/idempotency';
import { checkPrincipalPolicy } from '../workflows/agent/policy';
import { runLoop } from '../workflows/agent/run-loop';
import type { DecideStop, LoopPorts, LoopState } from '../workflows/agent/run-loop';
import { readStats } from './stats';
import { DOMAINS, registryOfDomain } from '../domains/index';

/** The bench runs the support domain, as the durable runs it is compared with do. */
const SUPPORT = DOMAINS.support!;
const SUPPORT_TOOLS = registryOfDomain(SUPPORT);

type Activities = ReturnType<typeof createActivities>;
type ToolFn = (input: Tagged<ToolInput>) => Promise<Observation>;

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

/** A decision that failed for good, stopped as the workflow stops it. */
function decideFailure(err: unknown): DecideStop {
  const failure = err instanceof ApplicationFailure ? err : undefined;
  return { stop: llmFailureStop(err), attempts: failure ? ledgerOf(failure.details?.[0]) : [] };
}

/** What a workflow has around the loop and a plain process has not: no one to ask, nothing recorded. */
const NOBODY_ELSE = {
  // No refunds service here: an effect whose call failed stays unsettled.
  reconcile: async (effect) => effectFromReconcile(effect, { error: 'no lookup in process' }),
  owner: async () => null,
  // Nobody answers here: the question expires as it is asked.
  pending: (fields) => {
    const now = new Date().toISOString();
    return { ...fields, requested_at: now, expires_at: now };
  },
  askPerson: async () => undefined,
  cutOff: { check: () => undefined, isCancellation: () => false },
  record: {
    step: () => undefined,
    toolCall: () => undefined,
    attempts: () => undefined,
    publish: () => undefined,
    phase: () => undefined,
    effects: () => undefined,
  },
} satisfies Partial<LoopPorts<InProcessResult>>;

export async function runInProcess(
  activities: Activities,
  workflowId: string,
  input: AgentInput,
): Promise<InProcessResult> {
  const budget = resolveBudget(input.budget);
  const startedAt = Date.now();
  // The workflow's decide key holds its chain's first run id (a UUID): the same shape here.
  const chainRunId = randomUUID();
  const state: LoopState = {
    usage: { ...EMPTY_USAGE },
    trace: [],
    history: [],
    seenCalls: [],
    effects: [],
    principal: input.principal,
    windDowns: new Map(),
  };
  let pricing: LlmPricing | undefined;
  const run = <A, R>(fn: (arg: Tagged<A>) => Promise<R>, arg: A, step: number, role: StepRole, id: string) =>
    inContext(fn, { ...arg, trace: { step, role } }, `${step}-${id}`, workflowId);
  const end = (status: 'ok' | 'stopped', stop_reason: StopReason, answer?: string): InProcessResult => ({
    status,
    stop_reason,
    ...(answer !== undefined ? { answer } : {}),
    trace: state.trace,
    history: state.history,
    usage: { ...state.usage, elapsed_ms: Date.now() - startedAt },
  });
  const ports: LoopPorts<InProcessResult> = {
    state,
    input,
    domain: SUPPORT,
    registry: SUPPORT_TOOLS,
    workflowId,
    stateKey: workflowId,
    stepsAtStart: 0,
    budget: () => budget,
    elapsedMs: () => Date.now() - startedAt,
    continueAsNewSuggested: () => false,
    policy: (name, args) =>
      checkPrincipalPolicy(SUPPORT_TOOLS[name], args, {
        principal: state.principal,
        history: state.history,
        nowMs: Date.now(),
        confirmedUsd: confirmedUsd(state.effects),
      }),
    pricing: async () => (budget.max_usd > 0 ? (pricing ??= await activities.llm_pricing()) : undefined),
    decide: async (step, payload, cap, leftUsd): Promise<DecideOutput | DecideStop> => {
      const decideInput = {
        payload,
        idempotency_key: decideKey(workflowId, chainRunId, step),
        ...(cap !== undefined ? { max_completion_tokens: cap } : {}),
        ...(leftUsd !== undefined ? { left_usd: leftUsd } : {}),
      };
      return run(activities.decide, decideInput, step, 'decide', 'decide').catch(decideFailure);
    },
    callTool: (call, idempotency_key) => {
      const tool = (activities as unknown as Record<string, ToolFn>)[call.name]!;
      const toolInput = { args: call.args, idempotency_key, principal: state.principal };
      return run(tool, toolInput, call.step, 'tool', call.name);
    },
    ...NOBODY_ELSE,
    end: {
      stop: (reason) => end('stopped', reason),
      finish: (answer) => end('ok', 'success', answer),
      continueAsNew: async () => {
        carryInPlace(state, startedAt);
        return undefined;
      },
    },
  };
  return runLoop(ports);
}

// ---- child-process entry (bench/main.ts forks this file) ----------------------------------

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
  // The same environment-driven config the worker process uses (bench/worker.ts).
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
