// A client's part of OpenTelemetry tracing: with an OTLP endpoint set (runtime/telemetry/trace-settings.ts),
// the SDK's client interceptor opens a span around each start, signal, update and query and puts its
// context in the call's headers, so a run's trace begins where `agent run` or `agent chat` started it
// and the workflow and its activities join it. Without an endpoint nothing OTel is loaded.
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { AgentError } from './agent-error';
import { traceSettingsFromEnv } from '../runtime/telemetry/trace-settings';
import type { TraceSettings } from '../runtime/telemetry/trace-settings';

/** The service name the CLI's spans carry unless OTEL_SERVICE_NAME says another. */
export const CLIENT_SERVICE_NAME = 'agent-cli';

export interface ClientTracing {
  interceptors: WorkflowClientInterceptor[];
  /** Sends the spans still batched: call it before the process exits. */
  shutdown(): Promise<void>;
}

/** The trace settings, or a one-line error naming the variable that is wrong. */
export function clientTraceSettings(env: NodeJS.ProcessEnv): TraceSettings | undefined {
  try {
    return traceSettingsFromEnv(env, CLIENT_SERVICE_NAME);
  } catch (err) {
    throw new AgentError(
      `${(err as Error).message} (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)`,
    );
  }
}

export async function clientTracingFromEnv(env: NodeJS.ProcessEnv): Promise<ClientTracing | undefined> {
  const settings = clientTraceSettings(env);
  if (!settings) return undefined;
  const { startTracing } = await import('../runtime/telemetry/tracing');
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry/lib/client');
  const tracing = startTracing(settings);
  return { interceptors: [new OpenTelemetryWorkflowClientInterceptor()], shutdown: () => tracing.shutdown() };
}
