// The baseline the benchmark compares the durable workflow with: the same ReAct loop as a plain
// in-process async function. It uses the same code for everything but durability (budgets,
// decision payload, action contract, gateway with the principal policy, idempotency keys) and calls the same activity
// functions (createActivities: the `openai` client for decide, the seed-data tools), each in an
// activity Context as the worker would give it, so the HTTP calls are byte for byte the same.
// What it lacks is what Temporal adds: no server round trips, no history, no recovery.
//
// Run as a child process by scripts/bench.ts (IPC: {type:'run', ...} -> {type:'done', ...}), so
// it gets its own event loop and CPU accounting, like the worker process it is compared with.
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../activities';
import { SEED_DATA } from '../activities/tools/seed-data';
import { llmConfigFromEnv } from '../activities/llm-config';
import { addTokens, budgetExhausted, EMPTY_USAGE, resolveBudget } from '../common/budget';
import type { Usage } from '../common/budget';
import { validateAction } from '../common/contract';
import { buildDecisionPayload } from '../common/decision-payload';
import { checkToolCall } from '../workflows/gateway';
import { checkPrincipalPolicy } from '../workflows/policy';
import { decideKey, toolKey } from '../workflows/idempotency';
import type { StopReason } from '../common/stop-reasons';
import { toolStop } from '../common/stop-reasons';
import { TOOL_REGISTRY } from '../common/tool-catalog';
import { readStats } from './bench-stats';
import type { AgentInput, HistoryEntry, Observation, ToolInput, TraceEntry } from '../common/types';

type Activities = ReturnType<typeof createActivities>;

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

export async function runInProcess(
  activities: Activities,
  workflowId: string,
  input: AgentInput,
): Promise<InProcessResult> {
  const budget = resolveBudget(input.budget);
  const allow = [...input.allow];
  const startedAt = Date.now();
  let usage: Usage = { ...EMPTY_USAGE };
  const trace: TraceEntry[] = [];
  const history: HistoryEntry[] = [];
  const seenCalls: string[] = [];
  const end = (status: 'ok' | 'stopped', stop_reason: StopReason, answer?: string): InProcessResult => ({
    status,
    stop_reason,
    ...(answer !== undefined ? { answer } : {}),
    trace,
    history,
    usage: { ...usage, elapsed_ms: Date.now() - startedAt },
  });

  for (;;) {
    usage = { ...usage, elapsed_ms: Date.now() - startedAt };
    const exhausted = budgetExhausted(budget, usage);
    if (exhausted) return end('stopped', exhausted);
    const step = usage.steps + 1;
    usage = { ...usage, steps: step };

    const payload = buildDecisionPayload(input.goal, input.user_id, history, allow);
    let decision;
    try {
      decision = await inContext(
        activities.decide,
        { payload, idempotency_key: decideKey(workflowId, 'inprocess', step) },
        `${step}-decide`,
        workflowId,
      );
    } catch {
      return end('stopped', 'llm_error');
    }
    usage = addTokens(usage, decision.usage);

    const validation = validateAction(decision.text);
    if (!validation.ok) return end('stopped', `invalid_action:${validation.reason}`);
    const action = validation.action;
    if (action.kind === 'final') return end('ok', 'success', action.answer);
    // Escalations and approvals wait for a person: not part of what this baseline measures.
    if (action.kind === 'escalate') return end('stopped', 'invalid_action:bad_kind');

    const gate = checkToolCall(action.name, action.args, {
      maxToolCalls: budget.max_tool_calls,
      allow,
      registry: TOOL_REGISTRY,
      toolCalls: usage.tool_calls,
      seenCalls,
      policy: (name, args) => checkPrincipalPolicy(name, args, { principalUserId: input.user_id, history }),
    });
    if (!gate.allowed) {
      trace.push({ step, tool: action.name, args_hash: gate.argsHash, ok: false, stop_reason: gate.reason });
      return end('stopped', gate.reason);
    }
    usage = { ...usage, tool_calls: usage.tool_calls + 1 };
    seenCalls.push(gate.signature);
    const tool = (activities as unknown as Record<string, (i: ToolInput) => Promise<Observation>>)[gate.name]!;
    let observation: Observation;
    try {
      observation = await inContext(
        tool,
        {
          args: gate.args,
          idempotency_key: toolKey(workflowId, step, gate.name, gate.argsHash),
          principal_user_id: input.user_id,
        },
        `${step}-${gate.name}`,
        workflowId,
      );
    } catch {
      const reason = toolStop.error(gate.name);
      trace.push({ step, tool: gate.name, args_hash: gate.argsHash, ok: false, stop_reason: reason });
      return end('stopped', reason);
    }
    trace.push({ step, tool: gate.name, args_hash: gate.argsHash, ok: true });
    history.push({ step, action: { kind: 'tool', name: gate.name, args: gate.args }, observation });
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
