// `npm run worker`: runs one agent worker until SIGINT/SIGTERM, then drains and exits.
import { loadDotEnv } from '../runtime/dotenv';
import { temporalEnv, describeConnection } from '../runtime/temporal-env';
import { describeCodec } from '../runtime/data-converter';
import { requiredLlmConfigFromEnv } from '../activities/decide/llm-config';
import { describeLimits } from '../activities/limiter/limiter-settings';
import { redactUrl } from '../activities/secrets';
import { describeDeployment } from './deployment';
import { metricsHostFromEnv, metricsPortFromEnv, sdkMetricsPortFromEnv, startMetricsServer } from './metrics-server';
import type { MetricsServer } from './metrics-server';
import { startOfflineModelIfAsked } from './offline-model';
import { startAgentWorker } from './start-worker';
import { workerReadiness } from './readiness';
import { processLog } from '../runtime/process-log';

/** Its own lines, beside the SDK's event log: one JSON object a line with LOG_FORMAT=json. */
const log = processLog('worker');

async function main(): Promise<void> {
  loadDotEnv(); // before anything reads the environment
  const env = temporalEnv(process.env, {}, (text) => log.warn(`worker: ${text}`));
  const fromEnv = requiredLlmConfigFromEnv(); // no key and no base URL: one line, exit 1
  const offline = await startOfflineModelIfAsked(fromEnv);
  const llm = offline?.llm ?? fromEnv;
  const codec = describeCodec(); // a bad key configuration stops the worker here, in one line
  const metricsPort = metricsPortFromEnv();
  const metricsHost = metricsHostFromEnv();
  // The SDK's exporter listens on loopback; the metrics server re-serves it.
  const sdkMetricsPort = metricsPort !== 'off' ? await sdkMetricsPortFromEnv() : undefined;
  const started = await startAgentWorker({ env, llm, ...(sdkMetricsPort !== undefined ? { sdkMetricsPort } : {}) });
  const { worker, metrics, limiterSettings, deployment } = started;

  let metricsServer: MetricsServer | undefined;
  if (metrics && metricsPort !== 'off') {
    try {
      metricsServer = await startMetricsServer({
        registry: metrics.registry,
        port: metricsPort,
        host: metricsHost,
        sdkMetricsUrl: `http://127.0.0.1:${sdkMetricsPort}/metrics`,
        isRunning: () => worker.getState() === 'RUNNING',
        readiness: workerReadiness(() => worker.getState() === 'RUNNING', started.connection),
      });
    } catch (err) {
      // A second worker on the same host: keep working, say loudly that this one is not scraped.
      log.warn(
        `worker: metrics endpoint disabled: cannot listen on ${metricsHost} port ${metricsPort} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); set AGENT_METRICS_PORT to a free port, 0 for any (AGENT_METRICS_HOST: the address)`,
      );
    }
  }

  // Worker.run() installs SIGINT/SIGTERM handlers that shut down gracefully.
  try {
    await started.run(() =>
      log.info(
        `worker ready: ${describeConnection(env)} task queue=${env.taskQueue} model=${llm.model}` +
          (offline ? ' llm=offline (the scripted demo model)' : llm.baseURL ? ` llm=${redactUrl(llm.baseURL)}` : '') +
          (llm.price ? '' : ' price=unknown (runs with --max-usd are refused)') +
          (metricsServer ? ` metrics=${metricsServer.url}` : '') +
          (limiterSettings ? ` rate limit=${describeLimits(limiterSettings)}` : '') +
          ` ${describeDeployment(deployment)}; ${codec}`,
      ),
    );
  } finally {
    await metricsServer?.close();
    await offline?.close();
  }
  log.info('worker stopped');
}

main().catch((err: unknown) => {
  log.error(`worker: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
