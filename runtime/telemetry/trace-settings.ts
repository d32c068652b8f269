// Whether the runtime exports OpenTelemetry traces, read from the standard OTEL_* variables (not the
// project's own table in runtime/env-vars.ts: their names and meaning are OpenTelemetry's). Tracing is
// off unless an OTLP endpoint is set, so a process without one loads no OTel module and pays nothing.

export interface TraceSettings {
  /** Where spans are POSTed (OTLP over HTTP): the traces endpoint as given, or the base endpoint + /v1/traces. */
  tracesUrl: string;
  serviceName: string;
  /** Prompts and observations go on spans only when this is on (the GenAI content-capture option). */
  captureContent: boolean;
}

/** The trace settings, or undefined when tracing is off (no endpoint, or OTEL_SDK_DISABLED=true). */
export function traceSettingsFromEnv(
  env: Record<string, string | undefined>,
  defaultServiceName: string,
): TraceSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const baseEndpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const tracesUrl = tracesEndpoint || (baseEndpoint ? `${baseEndpoint.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!tracesUrl) return undefined;
  if (!/^https?:\/\/[^/]/i.test(tracesUrl)) {
    throw new Error(`the OTLP traces endpoint ${JSON.stringify(tracesUrl)} is not an http(s) URL`);
  }
  return {
    tracesUrl,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || defaultServiceName,
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true',
  };
}
