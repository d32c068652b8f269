// The Temporal Web UI for the PostgreSQL-backed server: the same ui-server program and config
// template (config/docker.yaml of its module, rendered from TEMPORAL_* variables) as the
// temporalio/ui image in docker-compose.yml, built from source at that image's version.
import path from 'node:path';
import { findOrBuildUiServer } from './temporal-server-binaries';
import type { Log } from './go-install';
import { freePort, isPortFree } from './free-port';
import { spawnLogged, terminate, waitReady } from './child-processes';

export interface UiServer {
  version: string;
  url: string;
  logFile: string;
  stop(): Promise<void>;
}

export interface UiServerOptions {
  /** host:port of the Temporal frontend */
  address: string;
  namespace: string;
  port?: number;
  /** The codec server the browser reaches, when payloads are encrypted. */
  codecEndpoint?: string;
  logDir: string;
  log?: Log;
}

export async function startUiServer(opts: UiServerOptions): Promise<UiServer> {
  const ui = await findOrBuildUiServer(opts.log);
  if (opts.port !== undefined && !(await isPortFree(opts.port)))
    throw new Error(`Web UI port ${opts.port} on 127.0.0.1 is already in use`);
  const port = opts.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const logFile = path.join(opts.logDir, 'temporal-ui.log');
  // The template reads TEMPORAL_TLS_CA & co.: only the settings below reach it.
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_'))),
    TEMPORAL_ADDRESS: opts.address,
    TEMPORAL_UI_PORT: String(port),
    TEMPORAL_DEFAULT_NAMESPACE: opts.namespace,
    TEMPORAL_CORS_ORIGINS: url,
    TEMPORAL_NOTIFY_ON_NEW_VERSION: 'false',
    ...(opts.codecEndpoint
      ? { TEMPORAL_CODEC_ENDPOINT: opts.codecEndpoint, TEMPORAL_CODEC_INCLUDE_CREDENTIALS: 'true' }
      : {}),
  };
  const proc = spawnLogged(
    ui.server,
    ['--root', ui.moduleDir, '--config', 'config', '--env', 'docker', 'start'],
    logFile,
    {
      env,
    },
  );
  const ready = (): Promise<boolean> =>
    fetch(`${url}/api/v1/settings`).then(
      (r) => r.ok,
      () => false,
    );
  await waitReady(proc, `Temporal Web UI ${ui.version} at ${url}`, ready, logFile, 60_000);
  return { version: ui.version, url, logFile, stop: () => terminate(proc, 'SIGTERM') };
}
