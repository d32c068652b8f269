// Builds the agent's Worker. Workers are stateless: start as many as load needs on one queue.
import { processLog } from '../runtime/process-log';
import { Worker } from '@temporalio/worker';
import type { ActivityInterceptorsFactory, WorkerOptions, NativeConnection } from '@temporalio/worker';
import { createActivities } from '../activities';
import { VIEW_HANDOFF_SINKS } from '../activities/decide/view-handoff';
import { registerDomainFolders } from '../domains/backends';
import { LIMITER_WORKFLOW_TYPE } from '../common/limiter/llm-limiter';
import type { ActivityDeps } from '../activities';
import { agentDataConverter } from '../runtime/data-converter';
import { NO_METRICS_SINKS } from './metrics';
import type { AgentMetrics } from './metrics';
import { workflowCode } from './workflow-bundle';
import { NO_TRACE_SINKS } from './tracing';
import type { WorkerTracing } from './tracing';

export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** The agent's Prometheus metrics (worker/metrics.ts): registers its workflow sink and activity interceptor. */
  metrics?: AgentMetrics;
  /** OpenTelemetry tracing (worker/tracing.ts); without it, spans a traced run's workflow exports are dropped. */
  tracing?: WorkerTracing;
  /** Activity interceptors run inside the metrics one (the eval worker's tool faults: eval/worker.ts). */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /** Extra Worker options (tests, benchmarks); the defaults below are the shipped tuning. */
  overrides?: Partial<WorkerOptions>;
  /** Where the line saying which workflow code the worker runs goes (default: stderr, `worker: ...`). */
  log?: (line: string) => void;
}

/** Activity polls a worker holds open: what a hung one can swallow (docs/runtime-semantics.md#a-hung-worker). */
export const ACTIVITY_POLLS = 1;

export async function createAgentWorker(opts: AgentWorkerOptions): Promise<Worker> {
  const log = opts.log ?? ((line) => processLog('worker').info(`worker: ${line}`));
  // Payloads are encrypted whenever a codec key is configured (the codec runs outside the sandbox).
  // One a client sent that this worker cannot decrypt is marked, not thrown (runtime/data-converter.ts).
  const dataConverter =
    opts.overrides?.dataConverter ??
    agentDataConverter(process.env, { mode: 'mark', report: (reason) => log(`cannot decode a payload: ${reason}`) });
  // The prebuilt workflow bundle made for this converter (`npm run build`), else bundled now.
  // Domains from outside the tree (AGENT_DOMAINS): registered here for the activities, and in the workflow code.
  const code = workflowCode(dataConverter, registerDomainFolders());
  // The first is the outermost: the metrics see what the workflow sees.
  const activityInterceptors = [
    ...(opts.metrics ? [opts.metrics.activityInterceptor] : []),
    ...(opts.tracing?.activityInterceptors ?? []),
    ...(opts.activityInterceptors ?? []),
  ];
  log(code.description);
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    ...code.options,
    activities: createActivities(opts.deps),
    dataConverter,
    // Heartbeats carry cancellation: send them at least this often so a kill switch or a
    // max_seconds deadline reaches the running LLM call in well under a second.
    maxHeartbeatThrottleInterval: '300 milliseconds',
    defaultHeartbeatThrottleInterval: '300 milliseconds',
    // After a worker dies, the server keeps sending the run's next workflow task to the dead
    // worker's sticky queue for up to this long (10 s by default) before any worker may take it.
    // 2 s keeps crash recovery within ~5 s; a saturated worker pays with more workflow task
    // timeouts and replays (docs/benchmark.md has the numbers both ways).
    stickyQueueScheduleToStartTimeout: '2 seconds',
    // A hung worker (SIGSTOP, a frozen VM) keeps its open activity polls, and the server hands each
    // one a task it never runs: every retry it swallows costs a run a heartbeat timeout. One poll
    // caps that at one; most activities never use a poll (eager dispatch in the reply to the
    // workflow task). The SDK's maxConcurrentActivityTaskPolls is ignored (TS SDK 1.24): this is the knob.
    activityTaskPollerBehavior: { type: 'simple-maximum', maximum: ACTIVITY_POLLS },
    // A limiter that cannot replay its own history (a code change that broke it) fails where it is
    // seen and the next decision starts a fresh one, rather than every decision waiting on it
    // (its own errors fail it too: workflows/limiter/llm-limiter.ts; docs/rate-limits.md).
    workflowFailureErrorTypes: { '*': [], [LIMITER_WORKFLOW_TYPE]: ['NondeterminismError'] },
    // The workflow always calls its metrics sink (common/temporal/metrics-sink.ts): register one either way.
    // The view handoff: a decision on this worker reads its view from memory, not by a Query.
    sinks: {
      ...(opts.metrics?.sinks ?? NO_METRICS_SINKS),
      ...(opts.tracing?.sinks ?? NO_TRACE_SINKS),
      ...VIEW_HANDOFF_SINKS,
    },
    interceptors: {
      ...(activityInterceptors.length > 0 ? { activity: activityInterceptors } : {}),
      // Code bundled at start takes the interceptor modules a prebuilt bundle was made with.
      ...(code.workflowModules ? { workflowModules: code.workflowModules } : {}),
    },
    ...opts.overrides,
  });
}
