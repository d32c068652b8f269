import path from 'node:path';
import { isServerReachable, startDevServer } from './dev-server';
import { keyringFromEnv } from '../runtime/codec/keyring';
import { readEnv } from '../runtime/env-vars';
import { repoRoot } from './repo-root';

function envPort(name: string, fallback: number): number {
  const raw = process.env[name];
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0 || n > 65535) throw new Error(`${name}=${raw} is not a valid port`);
  return n;
}

/** Settings shared by `npm run server` and ensureLocalServer(). */
export function localServerConfig(): {
  port: number;
  uiPort: number;
  namespace: string;
  dbFile: string;
  codecEndpoint?: string;
} {
  const port = envPort('TEMPORAL_PORT', 7233);
  return {
    ...codecEndpointFromEnv(),
    port,
    // Same default as the CLI itself (gRPC port + 1000), i.e. 8233.
    uiPort: envPort('TEMPORAL_UI_PORT', port + 1000),
    namespace: process.env.TEMPORAL_NAMESPACE || 'default',
    dbFile: path.join(repoRoot(), '.temporal', 'dev.sqlite'),
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
    dbFile: cfg.dbFile,
    namespace: cfg.namespace,
    codecEndpoint: cfg.codecEndpoint,
  });
  return { address: server.address, uiUrl: server.uiUrl, namespace: server.namespace, stop: () => server.stop() };
}
