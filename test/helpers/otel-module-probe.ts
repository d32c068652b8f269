// Preloaded into a CLI or worker process (NODE_OPTIONS=--require <this file, compiled>): when the
// process exits, appends to OTEL_PROBE_FILE how many OpenTelemetry SDK modules it loaded, so a test
// can show that a process without tracing loads none. The API package (@opentelemetry/api) is not
// counted: prom-client loads it for its exemplars whenever the worker serves metrics.
import fs from 'node:fs';

process.on('exit', () => {
  const file = process.env.OTEL_PROBE_FILE;
  if (!file) return;
  const loaded = Object.keys(require.cache).filter((m) =>
    /[\\/](@opentelemetry[\\/](?!api[\\/])|interceptors-opentelemetry[\\/])/.test(m),
  );
  const script = process.argv[1] ?? '';
  fs.appendFileSync(file, JSON.stringify({ script, loaded: loaded.length }) + '\n');
});
