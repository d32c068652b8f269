// Starts the agent's worker process the one way `npm run worker` (worker/main.ts), the benchmark's
// worker (bench/worker.ts) and the eval's worker (eval/worker.ts) do it: the SDK's Runtime (the
// event log, the metrics exporter), the connection, the fleet-wide LLM limiter, the Worker with its
// deployment version, and the close of all of it.
import { processLog } from '../runtime/process-log';
import { NativeConnection, Runtime } from '@temporalio/worker';
import type { ActivityInterceptorsFactory, Worker, WorkerOptions } from '@temporalio/worker';
import { connectionOptions, unreachableMessage } from '../runtime/temporal-env';
import type { TemporalEnv } from '../runtime/temporal-env';
import type { ActivityDeps } from '../activities';
import type { LlmConfig } from '../activities/decide/llm-config';
import { limiterSettingsFromEnv } from '../activities/limiter/limiter-settings';
import type { LimiterSettings } from '../activities/limiter/limiter-settings';
import { createAgentWorker } from './create-worker';
import { becomeCurrentIfNone, deploymentFromEnv, describeDeployment, workerDeploymentOptions } from './deployment';
import type { AgentDeployment } from './deployment';
import { createAgentLogger, coreLogLevel, logSettingsFromEnv } from './logger';
import type { LogSettings } from './logger';
import { createAgentMetrics } from './metrics';
import type { AgentMetrics } from './metrics';
import { mcpPool } from '../activities/mcp/pool';
import { secretsFromEnv } from '../activities/secrets';
import { workerTracingFromEnv } from './tracing';

export interface StartAgentWorkerOptions {
  env: TemporalEnv;
  llm: LlmConfig;
  /**
   * Loopback port of the SDK's Prometheus exporter; with it the agent's own metrics are on too.
   * Unset: no metrics. The exporter belongs to the process-wide Runtime, installed here once.
   */
  sdkMetricsPort?: number;
  /** Activity deps over the defaults (AGENT_DATA_FILE's data, AGENT_REFUNDS_DB, the drills): the eval's world. */
  deps?: Partial<Omit<ActivityDeps, 'llm' | 'limiter'>>;
  /** Activity interceptors besides the metrics one (the eval's tool faults). */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /** Extra Worker options (benchmark experiments). */
  overrides?: Partial<WorkerOptions>;
  /** Default: AGENT_WORKER_VERSIONING and friends (worker/deployment.ts). */
  deployment?: AgentDeployment;
  log?: (line: string) => void;
  /** The event log's format and level; default: LOG_FORMAT and LOG_LEVEL. */
  logSettings?: LogSettings;
}

export interface StartedAgentWorker {
  worker: Worker;
  /** The worker's connection to the Temporal server (its readiness check asks the server through it). */
  connection: NativeConnection;
  metrics?: AgentMetrics;
  limiterSettings?: LimiterSettings;
  deployment?: AgentDeployment;
  /**
   * Runs the worker until it is shut down (SIGINT/SIGTERM: drains), then closes the limiter client
   * and the connection. `onPolling` runs once it polls (and, versioned, once its deployment has a
   * current version).
   */
  run(onPolling?: () => void | Promise<void>): Promise<void>;
}

/** The worker's connection; an unreachable server is one line that says which and why. */
async function connectOrExplain(env: StartAgentWorkerOptions['env']): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(connectionOptions(env));
  } catch (err) {
    throw new Error(`${unreachableMessage(env)} (${(err as Error).message.split('\n')[0]})`, { cause: err });
  }
}

export async function startAgentWorker(opts: StartAgentWorkerOptions): Promise<StartedAgentWorker> {
  const { env, llm } = opts;
  const log = opts.log ?? ((line: string) => processLog('worker').info(`worker: ${line}`));
  const deployment = opts.deployment ?? deploymentFromEnv();
  // The process-wide Runtime, once: the event log (LOG_FORMAT, LOG_LEVEL), native core logs
  // forwarded into it, and the SDK's Prometheus exporter when metrics are on.
  const logSettings = opts.logSettings ?? logSettingsFromEnv();
  Runtime.install({
    logger: createAgentLogger(logSettings),
    telemetryOptions: {
      logging: { filter: { core: coreLogLevel(logSettings.level), other: 'ERROR' }, forward: {} },
      ...(opts.sdkMetricsPort !== undefined
        ? { metrics: { prometheus: sdkPrometheusOptions(opts.sdkMetricsPort) } }
        : {}),
    },
  });
  const connection = await connectOrExplain(env);
  const countRuns = async (query: string) =>
    Number((await connection.workflowService.countWorkflowExecutions({ namespace: env.namespace, query })).count ?? 0);
  const metrics = opts.sdkMetricsPort !== undefined ? createAgentMetrics({ countRuns }) : undefined;
  // The fleet-wide LLM rate limit, when one is set: the activities ask the limiter workflow through a
  // Temporal client of their own (loaded only then: the client and gRPC cost a tenth of a start).
  const limiterSettings = limiterSettingsFromEnv(llm, env.taskQueue);
  const limiter = limiterSettings
    ? await (await import('../activities/limiter/llm-lease')).connectLimiter(env, limiterSettings, metrics?.limiter)
    : undefined;
  // OpenTelemetry, when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT): loaded only then.
  const tracing = workerTracingFromEnv(process.env, {
    model: llm.model,
    secrets: [llm.apiKey, ...secretsFromEnv()].filter((s): s is string => typeof s === 'string' && s.length > 0),
  });
  const worker = await createAgentWorker({
    tracing,
    connection,
    namespace: env.namespace,
    taskQueue: env.taskQueue,
    deps: {
      ...opts.deps,
      llm,
      ...(limiter ? { limiter: limiter.limiter } : {}),
    },
    ...(metrics ? { metrics } : {}),
    ...(opts.activityInterceptors ? { activityInterceptors: opts.activityInterceptors } : {}),
    log,
    overrides: {
      ...(deployment ? { workerDeploymentOptions: workerDeploymentOptions(deployment) } : {}),
      ...opts.overrides,
    },
  });

  const run = async (onPolling?: () => void | Promise<void>): Promise<void> => {
    const running = worker.run();
    try {
      try {
        await untilPolling(worker, running);
        if (deployment) {
          const made = await becomeCurrentIfNone(connection, env.namespace, deployment, worker.options.identity);
          if (made) log(`made ${describeDeployment(deployment)} the current version`);
        }
        await onPolling?.();
      } catch (err) {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running.catch(() => undefined);
        throw err;
      }
      await running;
    } finally {
      await limiter?.close();
      await mcpPool.close();
      await tracing.shutdown(); // the spans still batched
      await connection.close();
    }
  };
  return {
    worker,
    connection,
    ...(metrics ? { metrics } : {}),
    ...(limiterSettings ? { limiterSettings } : {}),
    ...(deployment ? { deployment } : {}),
    run,
  };
}

/**
 * The SDK's exporter, named by Prometheus conventions like the agent's own metrics: counters end in
 * `_total`, a metric's unit is in its name, durations are histograms in seconds
 * (`temporal_activity_execution_latency_seconds`), not milliseconds.
 */
export function sdkPrometheusOptions(port: number) {
  return {
    bindAddress: `127.0.0.1:${port}`,
    countersTotalSuffix: true,
    unitSuffix: true,
    useSecondsForDurations: true,
  };
}

/** Resolves once run() has the worker polling; rejects if it stopped before that. */
async function untilPolling(worker: Worker, running: Promise<void>): Promise<void> {
  let ended = false;
  void running.then(
    () => (ended = true),
    () => (ended = true),
  );
  while (worker.getState() !== 'RUNNING') {
    if (ended || worker.getState() === 'FAILED' || worker.getState() === 'STOPPED') {
      await running;
      throw new Error('the worker stopped before it polled');
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}
