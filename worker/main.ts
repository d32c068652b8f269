// `npm run worker`: runs one agent worker until SIGINT/SIGTERM, then drains and exits.
import { NativeConnection, Runtime } from '@temporalio/worker';
import { connectionOptions, describeConnection, temporalEnv, unreachableMessage } from '../runtime/temporal-env';
import { describeCodec } from '../runtime/data-converter';
import { requiredLlmConfigFromEnv } from '../activities/llm-config';
import { connectLimiter, describeLimits, limiterSettingsFromEnv } from '../activities/llm-lease';
import { redactUrl } from '../activities/secrets';
import { dataSourceFromEnv } from '../activities/tools/data-source';
import { createAgentWorker } from './create-worker';
import { createAgentMetrics } from './metrics';
import { metricsPortFromEnv, sdkMetricsPortFromEnv, startMetricsServer } from './metrics-server';
import type { MetricsServer } from './metrics-server';

async function main(): Promise<void> {
  const env = temporalEnv(process.env, {}, (text) => console.error(`worker: ${text}`));
  const llm = requiredLlmConfigFromEnv(); // no key and no base URL: one line, exit 1
  const codec = describeCodec(); // a bad key configuration stops the worker here, in one line
  const metricsPort = metricsPortFromEnv();

  // The SDK's Prometheus exporter belongs to the process-wide Runtime, which must be installed
  // before the first connection. It listens on loopback; the metrics server re-serves it.
  let sdkMetricsUrl: string | undefined;
  if (metricsPort !== 'off') {
    const sdkPort = await sdkMetricsPortFromEnv();
    sdkMetricsUrl = `http://127.0.0.1:${sdkPort}/metrics`;
    Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${sdkPort}` } } } });
  }
  const metrics = metricsPort !== 'off' ? createAgentMetrics() : undefined;

  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect(connectionOptions(env));
  } catch (err) {
    throw new Error(`${unreachableMessage(env)} (${(err as Error).message.split('\n')[0]})`, { cause: err });
  }
  // The fleet-wide LLM rate limit, when one is set: the activities ask the limiter workflow.
  const limiterSettings = limiterSettingsFromEnv(llm, env.taskQueue);
  const limiter = limiterSettings ? await connectLimiter(env, limiterSettings, metrics?.limiter) : undefined;
  const worker = await createAgentWorker({
    connection,
    namespace: env.namespace,
    taskQueue: env.taskQueue,
    deps: { llm, data: dataSourceFromEnv(), ...(limiter ? { limiter: limiter.limiter } : {}) },
    metrics,
  });

  let metricsServer: MetricsServer | undefined;
  if (metrics && metricsPort !== 'off') {
    try {
      metricsServer = await startMetricsServer({
        registry: metrics.registry,
        port: metricsPort,
        sdkMetricsUrl,
        isRunning: () => worker.getState() === 'RUNNING',
      });
    } catch (err) {
      // A second worker on the same host: keep working, say loudly that this one is not scraped.
      console.error(
        `worker: metrics endpoint disabled: cannot listen on port ${metricsPort} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); set AGENT_METRICS_PORT to a free port, 0 for any`,
      );
    }
  }

  // Worker.run() installs SIGINT/SIGTERM handlers that shut down gracefully.
  console.error(
    `worker ready: ${describeConnection(env)} task queue=${env.taskQueue} model=${llm.model}` +
      (llm.baseURL ? ` llm=${redactUrl(llm.baseURL)}` : '') +
      (metricsServer ? ` metrics=${metricsServer.url}` : '') +
      (limiterSettings ? ` rate limit=${describeLimits(limiterSettings)}` : '') +
      `; ${codec}`,
  );
  try {
    await worker.run();
  } finally {
    await metricsServer?.close();
    await limiter?.close();
    await connection.close();
  }
  console.error('worker stopped');
}

main().catch((err: unknown) => {
  console.error(`worker: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
