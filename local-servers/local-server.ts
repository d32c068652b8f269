import path from 'node:path';
import { isServerReachable, startDevServer } from './dev-server';
import { keyringFromEnv } from '../runtime/codec/keyring';
import { readEnv } from '../runtime/env-vars';
import { repoRoot } from './repo-root';

/** Settings shared by `npm run server` and ensureLocalServer(); a bad port is a one-line error naming its variable. */
export function localServerConfig(env: NodeJS.ProcessEnv = process.env): {
  port: number;
  uiPort: number;
  /** The dev server's HTTP API and /metrics ports; 0 = any free port. */
  httpPort: number;
  metricsPort: number;
  namespace: string;
  dbFile: string;
  codecEndpoint?: string;
} {
  const port = readEnv('TEMPORAL_PORT', env);
  return {
    ...codecEndpointFromEnv(),
    port,
    // Same default as the CLI itself (gRPC port + 1000), i.e. 8233.
    uiPort: readEnv('TEMPORAL_UI_PORT', env) ?? port + 1000,
    httpPort: readEnv('TEMPORAL_HTTP_PORT', env),
    metricsPort: readEnv('TEMPORAL_METRICS_PORT', env),
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    dbFile: path.resolve(repoRoot(), readEnv('TEMPORAL_DEV_DB', env) ?? path.join('.temporal', 'dev.sqlite')),
  };
}

/**
 * With a codec key configured, payloads are encrypted, so the Web UI needs the codec server
 * (`npm run codec-server`): AGENT_CODEC_ENDPOINT, or http://localhost:AGENT_CODEC_PORT (8888).
 */
function codecEndpointFromEnv(): { codecEndpoint?: string } {
  if (!keyringFromEnv()) return {};
  const endpoint = readEnv('AGENT_CODEC_ENDPOINT') ?? `http://localhost:${readEnv('AGENT_CODEC_PORT')}`;
  return { codecEndpoint: endpoint.replace(/\/+$/, '') };
}

export interface LocalServer {
  address: string;
  uiUrl: string;
  namespace: string;
  /** The SQLite file, when this call started the server. */
  dbFile?: string;
  /** Present only when this call started the server. */
  stop?: () => Promise<void>;
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0']);

/**
 * Reuse the server at TEMPORAL_ADDRESS (default localhost:7233) if it answers; otherwise start
 * a dev server on 7233/8233 with .temporal/dev.sqlite (only for local addresses).
 */
export async function ensureLocalServer(): Promise<LocalServer> {
  const cfg = localServerConfig();
  const address = process.env.TEMPORAL_ADDRESS || `localhost:${cfg.port}`;
  const sep = address.lastIndexOf(':');
  const host = sep > 0 ? address.slice(0, sep) : address;
  const port = sep > 0 ? Number(address.slice(sep + 1)) : cfg.port;
  if (!Number.isInteger(port)) throw new Error(`TEMPORAL_ADDRESS=${address} is not host:port`);
  const uiPort = process.env.TEMPORAL_UI_PORT ? cfg.uiPort : port + 1000;

  if (await isServerReachable(address, cfg.namespace)) {
    const uiUrl = process.env.TEMPORAL_UI_URL || `http://${host === '[::1]' ? 'localhost' : host}:${uiPort}`;
    return { address, uiUrl, namespace: cfg.namespace };
  }
  if (!LOCAL_HOSTS.has(host)) {
    throw new Error(
      `TEMPORAL_ADDRESS=${address} is not reachable (namespace ${cfg.namespace}) and is not local, so no dev server is started`,
    );
  }
  const server = await startDevServer({
    port,
    uiPort,
    httpPort: cfg.httpPort,
    metricsPort: cfg.metricsPort,
    dbFile: cfg.dbFile,
    namespace: cfg.namespace,
    codecEndpoint: cfg.codecEndpoint,
  });
  const { address: started, uiUrl, namespace, dbFile } = server;
  return { address: started, uiUrl, namespace, dbFile, stop: () => server.stop() };
}
