import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { traceSettingsFromEnv } from '../../runtime/telemetry/trace-settings';

test('tracing is off without an OTLP endpoint, or when the SDK is disabled', () => {
  assert.equal(traceSettingsFromEnv({}, 'agent-worker'), undefined);
  assert.equal(traceSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, 'agent-worker'), undefined);
  assert.equal(
    traceSettingsFromEnv(
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318', OTEL_SDK_DISABLED: 'TRUE' },
      'agent-worker',
    ),
    undefined,
  );
});

test('the base endpoint gets /v1/traces; the traces endpoint is used as given and wins', () => {
  assert.deepEqual(traceSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318/' }, 'agent-worker'), {
    tracesUrl: 'http://localhost:4318/v1/traces',
    serviceName: 'agent-worker',
    captureContent: false,
  });
  const both = traceSettingsFromEnv(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom',
      OTEL_SERVICE_NAME: 'svc',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    },
    'agent-worker',
  );
  assert.deepEqual(both, { tracesUrl: 'http://b:4318/custom', serviceName: 'svc', captureContent: true });
});

test('content capture is on only for "true"; a non-URL endpoint is a one-line error', () => {
  fc.assert(
    fc.property(fc.string(), (value) => {
      const s = traceSettingsFromEnv(
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:1', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: value },
        'w',
      );
      assert.equal(s?.captureContent, value.trim().toLowerCase() === 'true');
    }),
  );
  fc.assert(
    fc.property(
      fc.string().filter((s) => s.trim() !== '' && !/^https?:\/\/[^/]/i.test(s.trim())),
      (endpoint) => {
        assert.throws(
          () => traceSettingsFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint }, 'w'),
          (err: Error) => !err.message.includes('\n') && /not an http\(s\) URL/.test(err.message),
        );
      },
    ),
  );
});
