// The scripted scenarios the benchmark drives, shared by the durable runs (through a worker) and
// the plain in-process loop, so both see the same replies at the same latency.
//
// Replies are chosen by the step in the request's Idempotency-Key (`<workflowId>:decide:<step>`),
// not by request count, so a retried decision (after a crash) gets the same reply as the first
// attempt, and an N-step run is N decisions: N-1 tool calls with distinct arguments (the gateway's
// loop check never fires) and a final answer.
import type { Reply, Script } from '../offline-model/scripted-llm-server';
import { defaultAllowedToolsOf, DOMAINS } from '../domains/index';
import type { AgentInput } from '../common/types';

export const BENCH_GOAL =
  'User 42 asked: Can I get a refund now? Use tools to verify profile, billing state, and policy. ' +
  'Return a short final answer in English with USD amount and reason.';

export const FINAL_ANSWER = 'Yes: USD 49.00 is refundable within the 14-day window (refund-v3).';

/** The tool action the scenario takes at `step` (1-based), for a run of `steps` decisions. */
export function scenarioAction(step: number, steps: number): unknown {
  if (step >= steps) return { kind: 'final', answer: FINAL_ANSWER };
  if (step === 1) return { kind: 'tool', name: 'get_user_profile', args: { user_id: 42 } };
  if (step === 2) return { kind: 'tool', name: 'get_user_billing', args: { user_id: 42 } };
  return { kind: 'tool', name: 'search_policy', args: { query: `refund policy ${step}` } };
}

export function stepFromKey(key: string | undefined): number {
  const m = /:decide:(\d+)$/.exec(key ?? '');
  return m ? Number(m[1]) : NaN;
}

export interface ScenarioOptions {
  /** decisions per run, the last one is the final answer */
  steps: number;
  /** how long the scripted LLM takes to answer each decision */
  delayMs: number;
  /**
   * Per workflow id: which step's first attempt never answers (the cancel and crash phases).
   * Later attempts of that step answer normally.
   */
  hangAt?: (workflowId: string) => number | undefined;
}

/** A function script for ScriptedLlmServer's defaultScript: every workflow id follows it. */
export function scenarioScript(opts: ScenarioOptions | ((workflowId: string) => ScenarioOptions)): Script {
  const attempts = new Map<string, number>();
  return (req): Reply => {
    const workflowId = req.workflowId ?? '';
    const o = typeof opts === 'function' ? opts(workflowId) : opts;
    const step = stepFromKey(req.idempotencyKey);
    if (!Number.isFinite(step))
      return { status: 400, body: { error: { message: `bench: no step in key ${req.idempotencyKey}` } } };
    const key = req.idempotencyKey!;
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    if (attempt === 1 && o.hangAt?.(workflowId) === step) return { hang: true };
    return { action: scenarioAction(step, o.steps), delayMs: o.delayMs };
  };
}

/** The agent input of a benchmark run: budgets wide enough that only the scenario ends it. */
export function benchInput(steps: number, extra: Partial<AgentInput> = {}): AgentInput {
  return {
    goal: BENCH_GOAL,
    principal: '42',
    allow: [...defaultAllowedToolsOf(DOMAINS.support!)],
    budget: { max_steps: steps + 5, max_tool_calls: steps + 5, max_seconds: 3600, max_tokens: 0 },
    ...extra,
  };
}
