// One Prometheus endpoint per worker: GET /metrics answers with the agent's own registry
// (agent_*, plus Node's process_* / nodejs_*) followed by the Temporal SDK's metrics (temporal_*).
// The SDK's exporter lives in the native Runtime and must bind a port of its own; it listens on
// loopback only and this server fetches from it on each scrape, so operators scrape one port.
// GET /healthz is the container health check: 200 while the worker is running, else 503.
// GET /readyz is the readiness check: 200 while the worker runs and reaches the Temporal server
// (worker/readiness.ts), else 503 with the reason.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import type { Registry } from 'prom-client';
import { readEnv } from '../runtime/env-vars';
import type { ReadinessCheck } from './readiness';

export interface MetricsServer {
  /** The port actually bound (useful with port 0). */
  port: number;
  url: string;
  close(): Promise<void>;
}

export interface MetricsServerOptions {
  /** Called per scrape: the agent's registry may be built lazily (worker/metrics.ts). */
  registry: () => Registry;
  port: number;
  /** The address to listen on; default loopback only (AGENT_METRICS_HOST widens it, e.g. in a container). */
  host?: string;
  /** The SDK exporter's URL (http://127.0.0.1:PORT/metrics); omitted: only the agent's metrics. */
  sdkMetricsUrl?: string;
  /** For /healthz: true while the worker polls (omitted: healthy while this server is up). */
  isRunning?: () => boolean;
  /** For /readyz (omitted: ready when /healthz is healthy). */
  readiness?: ReadinessCheck;
}

export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  // Loopback unless told otherwise: the endpoint has no authentication.
  const host = opts.host ?? '127.0.0.1';
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') {
      const running = opts.isRunning?.() ?? true;
      res.writeHead(running ? 200 : 503, { 'content-type': 'text/plain' }).end(running ? 'ok\n' : 'not running\n');
      return;
    }
    if (req.method === 'GET' && path === '/readyz') {
      const check = opts.readiness ?? (async () => ({ ready: opts.isRunning?.() ?? true, reason: 'not running' }));
      check().then(
        ({ ready, reason }) =>
          res
            .writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' })
            .end(ready ? 'ok\n' : `not ready: ${reason}\n`),
        (err: Error) => res.writeHead(503, { 'content-type': 'text/plain' }).end(`not ready: ${err.message}\n`),
      );
      return;
    }
    if (req.method !== 'GET' || (path !== '/metrics' && path !== '/')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: scrape /metrics\n');
      return;
    }
    scrape(opts).then(
      (body) => res.writeHead(200, { 'content-type': opts.registry().contentType }).end(body),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    port,
    url: `http://${shownHost}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function scrape(opts: MetricsServerOptions): Promise<string> {
  const own = await opts.registry().metrics();
  if (!opts.sdkMetricsUrl) return own;
  let sdk: string;
  try {
    const response = await fetch(opts.sdkMetricsUrl, { signal: AbortSignal.timeout(2_000) });
    sdk = response.ok ? await response.text() : `# temporal sdk metrics unavailable: HTTP ${response.status}\n`;
  } catch (err) {
    sdk = `# temporal sdk metrics unavailable: ${(err as Error).message}\n`;
  }
  return `${own.endsWith('\n') ? own : own + '\n'}${sdk}`;
}

/** A loopback port nobody listens on right now (for the SDK exporter, which needs a fixed address). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** AGENT_SDK_METRICS_PORT: the loopback port of the SDK's exporter; unset = any free port. */
export async function sdkMetricsPortFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return readEnv('AGENT_SDK_METRICS_PORT', env) ?? freeLoopbackPort();
}

/** AGENT_METRICS_HOST: the address the endpoint listens on; unset = 127.0.0.1. */
export function metricsHostFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return readEnv('AGENT_METRICS_HOST', env);
}

/**
 * AGENT_METRICS_PORT: unset = 9464; a number = that port (0 = any free port, printed at start);
 * `off` = no metrics endpoint.
 */
export function metricsPortFromEnv(env: NodeJS.ProcessEnv = process.env): number | 'off' {
  return readEnv('AGENT_METRICS_PORT', env);
}
