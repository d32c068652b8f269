// A worker's part of OpenTelemetry tracing, from the OTEL_* variables (runtime/telemetry/trace-settings.ts):
// the SDK's activity interceptor (a RunActivity span per attempt, child of the workflow's span),
// the agent's GenAI and tool spans inside it (genai-spans.ts), and the sink the workflow
// interceptors (workflows/tracing/otel-interceptors.ts) export their spans through. Built only with
// tracing on: otherwise the worker loads no OTel module and registers a sink that drops spans.
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { OpenTelemetrySinks, SerializableSpan } from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type * as OtelWorker from '@temporalio/interceptors-opentelemetry/lib/worker';
import { traceSettingsFromEnv } from '../runtime/telemetry/trace-settings';
import { startTracing } from '../runtime/telemetry/tracing';
import type { Tracing } from '../runtime/telemetry/tracing';
import { genAiSpans } from './genai-spans';
import type { GenAiSpanOptions } from './genai-spans';

export interface WorkerTracing {
  tracing?: Tracing;
  /** Outermost first: the SDK's RunActivity span, then the agent's span inside it. */
  activityInterceptors: ActivityInterceptorsFactory[];
  sinks: InjectedSinks<OpenTelemetrySinks>;
  shutdown(): Promise<void>;
}

/** The service name a worker's spans carry unless OTEL_SERVICE_NAME says another. */
export const WORKER_SERVICE_NAME = 'agent-worker';

/**
 * A run started by a traced client calls the exporter sink whatever this worker's settings: without
 * tracing here, its spans are dropped (quietly: a sink the workflow calls must exist).
 */
export const NO_TRACE_SINKS: InjectedSinks<OpenTelemetrySinks> = { exporter: { export: { fn: () => undefined } } };

export function workerTracingFromEnv(env: NodeJS.ProcessEnv, spans: GenAiSpanOptions): WorkerTracing {
  const settings = traceSettingsFromEnv(env, WORKER_SERVICE_NAME);
  if (!settings) return { activityInterceptors: [], sinks: NO_TRACE_SINKS, shutdown: async () => undefined };
  const tracing = startTracing(settings);
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { OpenTelemetryActivityInboundInterceptor, makeWorkflowExporter } =
    require('@temporalio/interceptors-opentelemetry/lib/worker') as typeof OtelWorker;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const exporter = makeWorkflowExporter(tracing.processor, tracing.resource);
  return {
    tracing,
    activityInterceptors: [
      (ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx) }),
      genAiSpans(tracing, spans),
    ],
    sinks: {
      exporter: {
        export: {
          // The SDK copies the whole WorkflowInfo onto every span (memo, last result, search
          // attributes...): only the run's identity goes out.
          fn: (info, spans: SerializableSpan[]) =>
            exporter.export.fn(
              {
                workflowId: info.workflowId,
                runId: info.runId,
                workflowType: info.workflowType,
                taskQueue: info.taskQueue,
                namespace: info.namespace,
              } as typeof info,
              spans,
            ),
          callDuringReplay: false,
        },
      },
    },
    shutdown: () => tracing.shutdown(),
  };
}
