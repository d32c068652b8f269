// The agent's own Prometheus metrics (prom-client, a registry of its own), fed from two places:
//  - the workflow, through the `agentMetrics` sink (workflows/metrics-sink.ts): runs started and
//    ended by status and stop reason, steps, tool calls by tool and outcome. Logical events,
//    counted once per run even when a history is replayed (sinks are not called during replay).
//    Also every LLM attempt the run charged (cost accounting, common/cost.ts): dollars and tokens by
//    outcome, counted from the run's history, so an attempt that failed after reporting usage counts.
//  - an activity interceptor around `decide`: LLM latency (per attempt, by outcome) and tokens.
// The SDK's own Temporal metrics come from the Runtime's Prometheus exporter; worker/metrics-server.ts
// serves both on one port.
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AgentMetricsSinks, ToolOutcome } from '../common/metrics-sink';
import { toolNamedReason } from '../common/stop-reasons';
import { TOOL_REGISTRY } from '../common/tool-catalog';
import type { DecideOutput } from '../common/types';
import { LLM_REJECTED, LLM_RETRYABLE, LLM_TIMEOUT } from '../common/types';

export const DECIDE_ACTIVITY = 'decide';

/** Seconds; LLM calls range from a few hundred ms to the client timeout. */
const LLM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];

export interface AgentMetrics {
  registry: Registry;
  sinks: InjectedSinks<AgentMetricsSinks>;
  activityInterceptor: ActivityInterceptorsFactory;
}

export function createAgentMetrics(opts: { defaultMetrics?: boolean } = {}): AgentMetrics {
  const registry = new Registry();
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });

  const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  const runsStarted = counter('agent_runs_started_total', 'Agent runs started (a continue-as-new is not a new run)');
  const runsEnded = counter(
    'agent_runs_ended_total',
    'Agent runs ended, by AgentStatus (ok, stopped, cancelled) and stop reason',
    ['status', 'stop_reason'],
  );
  const steps = counter('agent_steps_total', 'Agent loop steps begun (one LLM decision each)');
  const toolCalls = counter(
    'agent_tool_calls_total',
    'Tool calls the model asked for, by tool and outcome (ok, error: the tool answered ok=false, failed: the activity failed, denied: the gateway refused)',
    ['tool', 'outcome'],
  );
  const llmLatency = new Histogram({
    name: 'agent_llm_request_duration_seconds',
    help: 'Duration of one LLM decision attempt (the decide activity), by outcome',
    labelNames: ['outcome'] as const,
    buckets: LLM_BUCKETS,
    registers: [registry],
  });
  const llmTokens = counter(
    'agent_llm_tokens_total',
    'LLM tokens used by successful decisions, by kind (prompt, completion)',
    ['kind'],
  );

  const llmCost = counter(
    'agent_llm_cost_usd_total',
    'US dollars charged for LLM attempts (every attempt that reported usage, priced by the worker), by outcome (ok, failed)',
    ['outcome'],
  );
  const llmCharged = counter(
    'agent_llm_attempts_charged_total',
    'LLM attempts charged (they reported usage), by outcome (ok: the decision; failed: retried or last)',
    ['outcome'],
  );
  const llmChargedTokens = counter(
    'agent_llm_charged_tokens_total',
    'LLM tokens charged, every attempt that reported usage, by kind (prompt, completion)',
    ['kind'],
  );

  const sinks: InjectedSinks<AgentMetricsSinks> = {
    agentMetrics: {
      runStarted: { fn: () => runsStarted.inc(), callDuringReplay: false },
      step: { fn: () => steps.inc(), callDuringReplay: false },
      toolCall: {
        fn: (_info, tool: string, outcome: ToolOutcome) => toolCalls.inc({ tool: toolLabel(tool), outcome }),
        callDuringReplay: false,
      },
      runEnded: {
        fn: (_info, status: string, stopReason: string) =>
          runsEnded.inc({ status, stop_reason: stopReasonLabel(stopReason) }),
        callDuringReplay: false,
      },
      llmAttempt: {
        fn: (_info, outcome: string, promptTokens: number, completionTokens: number, costUsd: number) => {
          const label = outcome === 'ok' ? 'ok' : 'failed';
          llmCharged.inc({ outcome: label });
          llmCost.inc({ outcome: label }, Math.max(0, costUsd));
          llmChargedTokens.inc({ kind: 'prompt' }, Math.max(0, promptTokens));
          llmChargedTokens.inc({ kind: 'completion' }, Math.max(0, completionTokens));
        },
        callDuringReplay: false,
      },
    },
  };

  const activityInterceptor: ActivityInterceptorsFactory = (ctx) => ({
    inbound: {
      async execute(input, next) {
        if (ctx.info.activityType !== DECIDE_ACTIVITY) return next(input);
        const done = llmLatency.startTimer();
        try {
          const output = (await next(input)) as DecideOutput;
          done({ outcome: 'ok' });
          llmTokens.inc({ kind: 'prompt' }, output.usage?.prompt_tokens ?? 0);
          llmTokens.inc({ kind: 'completion' }, output.usage?.completion_tokens ?? 0);
          return output;
        } catch (err) {
          done({ outcome: llmOutcome(err) });
          throw err;
        }
      },
    },
  });

  return { registry, sinks, activityInterceptor };
}

/** For workers built without metrics (tests, scripts): the workflow's sink calls go nowhere, quietly. */
export const NO_METRICS_SINKS: InjectedSinks<AgentMetricsSinks> = {
  agentMetrics: {
    runStarted: { fn: () => undefined },
    step: { fn: () => undefined },
    toolCall: { fn: () => undefined },
    runEnded: { fn: () => undefined },
    llmAttempt: { fn: () => undefined },
  },
};

/** Tool names come from the model: only registered ones become label values (bounded cardinality). */
export function toolLabel(tool: string): string {
  return Object.prototype.hasOwnProperty.call(TOOL_REGISTRY, tool) ? tool : '(unregistered)';
}

/** `tool_denied:<name>` and friends keep the name only if it is a registered tool. */
export function stopReasonLabel(reason: string): string {
  const named = toolNamedReason(reason);
  return named ? `${named.key}:${toolLabel(named.tool)}` : reason;
}

function llmOutcome(err: unknown): string {
  if (err instanceof CancelledFailure) return 'cancelled';
  if (err instanceof ApplicationFailure) {
    if (err.type === LLM_TIMEOUT) return 'timeout';
    if (err.type === LLM_RETRYABLE) return 'retryable_error';
    if (err.type === LLM_REJECTED) return 'rejected';
  }
  return 'error';
}
