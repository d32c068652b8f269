// The agent's own Prometheus metrics (prom-client, a registry of its own), fed from two places:
//  - the workflow, through the `agentMetrics` sink (common/temporal/metrics-sink.ts): runs started and
//    ended by status and stop reason, steps, tool calls by tool and outcome. Logical events,
//    counted once per run even when a history is replayed (sinks are not called during replay).
//    Also every LLM attempt the run charged (cost accounting, common/cost/cost.ts): dollars and tokens by
//    outcome, counted from the run's history, so an attempt that failed after reporting usage counts.
//  - an activity interceptor around `decide`: LLM latency (per attempt, by outcome) and tokens.
//  - Temporal's visibility store, when scraped: the runs waiting for a person by kind (waiting-gauge.ts).
// The SDK's own Temporal metrics come from the Runtime's Prometheus exporter; worker/metrics-server.ts
// serves both on one port.
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type * as PromClient from 'prom-client';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LeaseObserver } from '../activities/limiter/limiter-settings';
import type { AgentMetricsSinks, ToolOutcome } from '../common/temporal/metrics-sink';
import { toolNamedReason } from '../common/stop-reasons';
import { ALL_TOOLS } from '../domains/index';
import type { DecideOutput } from '../common/types';
import { LLM_REJECTED, LLM_RETRYABLE, LLM_TIMEOUT } from '../common/agent-messages';
import { waitingCounts } from './waiting-gauge';
import { viewReads } from '../activities/decide/view-handoff';
import type { CountRuns } from './waiting-gauge';

export const DECIDE_ACTIVITY = 'decide';

/** Seconds; LLM calls range from a few hundred ms to the client timeout. */
const LLM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];

export interface AgentMetrics {
  /** The agent's registry; prom-client is loaded and the metrics built on the first call (or event). */
  registry: () => Registry;
  sinks: InjectedSinks<AgentMetricsSinks>;
  activityInterceptor: ActivityInterceptorsFactory;
  /** The fleet-wide LLM rate limit as this worker sees it (activities/limiter/llm-lease.ts). */
  limiter: LeaseObserver;
}

interface Instruments {
  registry: Registry;
  runsStarted: Counter;
  runsEnded: Counter<'status' | 'stop_reason'>;
  steps: Counter;
  toolCalls: Counter<'tool' | 'outcome'>;
  llmLatency: Histogram<'outcome'>;
  llmTokens: Counter<'kind'>;
  llmCost: Counter<'outcome'>;
  llmCharged: Counter<'outcome'>;
  llmChargedTokens: Counter<'kind'>;
  leasesGranted: Counter;
  leaseTokens: Counter;
  leasePauses: Counter;
  leasesQueued: Gauge;
  leaseWait: Histogram;
}

function buildInstruments(defaultMetrics: boolean, countRuns: CountRuns | undefined): Instruments {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = require('prom-client') as typeof PromClient;
  const registry = new Registry();
  if (defaultMetrics) collectDefaultMetrics({ register: registry });

  const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  if (countRuns) {
    const counts = waitingCounts(countRuns);
    new Gauge({
      name: 'agent_runs_waiting',
      help: "Open agent runs waiting for a person, by kind (AgentWaiting: approval, escalation, customer, consent, topup); the namespace's count, the same on every worker: aggregate with max",
      labelNames: ['kind'] as const,
      registers: [registry],
      async collect() {
        const now = await counts();
        this.reset();
        for (const [kind, n] of now ?? []) this.set({ kind }, n);
      },
    });
  }
  return {
    registry: withViewReads(registry, Counter),
    runsStarted: counter('agent_runs_started_total', 'Agent runs started (a continue-as-new is not a new run)'),
    runsEnded: counter(
      'agent_runs_ended_total',
      'Agent runs ended, by AgentStatus (ok, stopped, cancelled) and stop reason',
      ['status', 'stop_reason'],
    ),
    steps: counter('agent_steps_total', 'Agent loop steps begun (one LLM decision each)'),
    toolCalls: counter(
      'agent_tool_calls_total',
      'Tool calls the model asked for, by tool and outcome (ok, error: the tool answered ok=false, failed: the activity failed, denied: the gateway refused)',
      ['tool', 'outcome'],
    ),
    llmLatency: new Histogram({
      name: 'agent_llm_request_duration_seconds',
      help: 'Duration of one LLM decision attempt (the decide activity), by outcome',
      labelNames: ['outcome'] as const,
      buckets: LLM_BUCKETS,
      registers: [registry],
    }),
    llmTokens: counter(
      'agent_llm_tokens_total',
      'LLM tokens used by successful decisions, by kind (prompt, completion)',
      ['kind'],
    ),
    // Every charged attempt: a retried attempt that reported usage is paid for too.
    llmCost: counter(
      'agent_llm_cost_usd_total',
      'US dollars charged for LLM attempts (every attempt that reported usage, priced by the worker), by outcome (ok, failed)',
      ['outcome'],
    ),
    llmCharged: counter(
      'agent_llm_attempts_charged_total',
      'LLM attempts charged (they reported usage), by outcome (ok: the decision; failed: retried or last)',
      ['outcome'],
    ),
    llmChargedTokens: counter(
      'agent_llm_charged_tokens_total',
      'LLM tokens charged, every attempt that reported usage, by kind (prompt, completion)',
      ['kind'],
    ),
    // The limiter's own view of the whole fleet is its query (`agent limits`); these are this worker's.
    leasesGranted: counter('agent_llm_leases_granted_total', 'LLM leases granted to this worker by the rate limiter'),
    leaseTokens: counter(
      'agent_llm_lease_tokens_granted_total',
      'Tokens reserved by the leases granted to this worker',
    ),
    leasePauses: counter('agent_llm_limiter_pauses_total', 'Provider 429s that paused the rate limiter for everyone'),
    leasesQueued: new Gauge({
      name: 'agent_llm_leases_queued',
      help: "This worker's LLM decisions waiting for a lease now",
      registers: [registry],
    }),
    leaseWait: new Histogram({
      name: 'agent_llm_lease_wait_seconds',
      help: 'How long a decision waited for its LLM lease',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300],
      registers: [registry],
    }),
  };
}

/** The registry, with how decide activities read their views (activities/decide/view-handoff.ts), counted when scraped. */
function withViewReads(registry: Registry, Counter: typeof PromClient.Counter): Registry {
  new Counter({
    name: 'agent_model_view_reads_total',
    help: "How decide activities read their run's view: handoff (from the workflow on this worker, in memory) or query (the model_view Query)",
    labelNames: ['via'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const via of ['handoff', 'query'] as const) this.inc({ via }, viewReads[via]);
    },
  });
  return registry;
}

/** `countRuns`: counts in the namespace's visibility store (the agent_runs_waiting gauge); without it, no gauge. */
export function createAgentMetrics(opts: { defaultMetrics?: boolean; countRuns?: CountRuns } = {}): AgentMetrics {
  // prom-client takes a few hundred ms of a worker's start to load: built when first needed (a
  // scrape, a run's first event), which is after the worker polls.
  let instruments: Instruments | undefined;
  const m = () => (instruments ??= buildInstruments(opts.defaultMetrics ?? true, opts.countRuns));

  const limiter: LeaseObserver = {
    waiting: (delta) => m().leasesQueued.inc(delta),
    granted: (waitMs, tokens) => {
      m().leasesGranted.inc();
      m().leaseTokens.inc(tokens);
      m().leaseWait.observe(waitMs / 1000);
    },
    paused: () => m().leasePauses.inc(),
  };

  const sinks: InjectedSinks<AgentMetricsSinks> = {
    agentMetrics: {
      runStarted: { fn: () => m().runsStarted.inc(), callDuringReplay: false },
      step: { fn: () => m().steps.inc(), callDuringReplay: false },
      toolCall: {
        fn: (_info, tool: string, outcome: ToolOutcome) => m().toolCalls.inc({ tool: toolLabel(tool), outcome }),
        callDuringReplay: false,
      },
      runEnded: {
        fn: (_info, status: string, stopReason: string) =>
          m().runsEnded.inc({ status, stop_reason: stopReasonLabel(stopReason) }),
        callDuringReplay: false,
      },
      llmAttempt: {
        fn: (_info, outcome: string, promptTokens: number, completionTokens: number, costUsd: number) => {
          const label = outcome === 'ok' ? 'ok' : 'failed';
          m().llmCharged.inc({ outcome: label });
          m().llmCost.inc({ outcome: label }, Math.max(0, costUsd));
          m().llmChargedTokens.inc({ kind: 'prompt' }, Math.max(0, promptTokens));
          m().llmChargedTokens.inc({ kind: 'completion' }, Math.max(0, completionTokens));
        },
        callDuringReplay: false,
      },
    },
  };

  const activityInterceptor: ActivityInterceptorsFactory = (ctx) => ({
    inbound: {
      async execute(input, next) {
        if (ctx.info.activityType !== DECIDE_ACTIVITY) return next(input);
        const done = m().llmLatency.startTimer();
        try {
          const output = (await next(input)) as DecideOutput;
          done({ outcome: 'ok' });
          m().llmTokens.inc({ kind: 'prompt' }, output.usage?.prompt_tokens ?? 0);
          m().llmTokens.inc({ kind: 'completion' }, output.usage?.completion_tokens ?? 0);
          return output;
        } catch (err) {
          done({ outcome: llmOutcome(err) });
          throw err;
        }
      },
    },
  });

  return { registry: () => m().registry, sinks, activityInterceptor, limiter };
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
  return Object.prototype.hasOwnProperty.call(ALL_TOOLS, tool) ? tool : '(unregistered)';
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
