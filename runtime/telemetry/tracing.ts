// The OpenTelemetry SDK of one process (the CLI or a worker), built from its trace settings
// (trace-settings.ts). Only a process with tracing on calls this, and the OTel packages are required
// here, inside the call: a CLI or worker without an OTLP endpoint never loads them.
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type * as Api from '@opentelemetry/api';
import type * as TraceNode from '@opentelemetry/sdk-trace-node';
import type * as Resources from '@opentelemetry/resources';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type { TraceSettings } from './trace-settings';

export interface Tracing {
  settings: TraceSettings;
  /** The registered global API: spans made with `api.trace.getTracer(...)` go to the exporter. */
  api: typeof Api;
  resource: Resource;
  /** Batches the spans made in this process and in its workflows (the worker's sink feeds it too). */
  processor: SpanProcessor;
  /** Sends what is batched and stops: a CLI calls it before it exits, a worker when it stops. */
  shutdown(): Promise<void>;
}

/** Registers a tracer provider that exports to settings.tracesUrl (OTLP over HTTP, JSON). */
export function startTracing(settings: TraceSettings): Tracing {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const api = require('@opentelemetry/api') as typeof Api;
  const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node') as typeof TraceNode;
  const { Resource } = require('@opentelemetry/resources') as typeof Resources;
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const resource = new Resource({ 'service.name': settings.serviceName });
  const exporter: SpanExporter = new OTLPTraceExporter({ url: settings.tracesUrl });
  // Short batches: a CLI lives seconds, and an operator looks at a run's trace while it runs.
  const processor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register(); // the AsyncLocalStorage context manager and W3C propagation, as the SDK's interceptors expect
  let stopped: Promise<void> | undefined;
  return {
    settings,
    api,
    resource,
    processor,
    shutdown: () => (stopped ??= provider.shutdown().catch(() => undefined)),
  };
}
