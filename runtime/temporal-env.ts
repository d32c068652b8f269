// Where Temporal is and which task queue the agent uses, from the environment. Shared by the
// worker, the CLI, the demo and the tests so they always agree.
//
// Local dev server: nothing to set. Temporal Cloud (or any TLS-protected server):
//   TEMPORAL_ADDRESS      host:port, e.g. my-ns.a1b2c.tmprl.cloud:7233
//   TEMPORAL_NAMESPACE    e.g. my-ns.a1b2c
//   TEMPORAL_API_KEY      an API key (implies TLS), or
//   TEMPORAL_TLS_CERT + TEMPORAL_TLS_KEY   mTLS client certificate and key (file paths, or the PEM text itself)
//   TEMPORAL_TLS_CA       optional: the server's CA (a private CA; Cloud does not need it)
//   TEMPORAL_TLS_SERVER_NAME  optional: SNI / host name to verify, when it differs from the address
//   TEMPORAL_TLS=true     TLS with the system's trust store and no client certificate
import { readFileSync } from 'node:fs';

export interface TemporalTls {
  serverNameOverride?: string;
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
}

export interface TemporalEnv {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Base URL of the Temporal Web UI, for links to runs. */
  uiUrl: string;
  /** TLS settings; undefined for a plain connection (the local dev server). */
  tls?: TemporalTls;
  /** Temporal Cloud API key (never printed). */
  apiKey?: string;
}

export const DEFAULT_TASK_QUEUE = 'react-agent';

export function temporalEnv(env: NodeJS.ProcessEnv = process.env): TemporalEnv {
  const namespace = env.TEMPORAL_NAMESPACE || 'default';
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  return {
    address: env.TEMPORAL_ADDRESS || 'localhost:7233',
    namespace,
    taskQueue: env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    uiUrl: (env.TEMPORAL_UI_URL || (apiKey ? 'https://cloud.temporal.io' : 'http://localhost:8233')).replace(
      /\/+$/,
      '',
    ),
    tls: tlsFromEnv(env, apiKey !== undefined),
    apiKey,
  };
}

function tlsFromEnv(env: NodeJS.ProcessEnv, apiKey: boolean): TemporalTls | undefined {
  const cert = env.TEMPORAL_TLS_CERT || undefined;
  const key = env.TEMPORAL_TLS_KEY || undefined;
  if ((cert === undefined) !== (key === undefined)) {
    throw new Error('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together: set both (mTLS) or neither');
  }
  const explicit = (env.TEMPORAL_TLS ?? '').toLowerCase();
  if (explicit !== '' && !['true', 'false', '1', '0'].includes(explicit)) {
    throw new Error(`TEMPORAL_TLS must be true or false, got "${env.TEMPORAL_TLS}"`);
  }
  const ca = env.TEMPORAL_TLS_CA || undefined;
  const serverName = env.TEMPORAL_TLS_SERVER_NAME || undefined;
  const wanted =
    explicit === 'true' ||
    explicit === '1' ||
    apiKey ||
    cert !== undefined ||
    ca !== undefined ||
    serverName !== undefined;
  if (!wanted) return undefined;
  if (explicit === 'false' || explicit === '0') {
    throw new Error(
      'TEMPORAL_TLS=false contradicts TEMPORAL_API_KEY / TEMPORAL_TLS_*: an API key or a certificate needs TLS',
    );
  }
  return {
    serverNameOverride: serverName,
    serverRootCACertificate: ca ? pem(ca, 'TEMPORAL_TLS_CA') : undefined,
    clientCertPair:
      cert && key ? { crt: pem(cert, 'TEMPORAL_TLS_CERT'), key: pem(key, 'TEMPORAL_TLS_KEY') } : undefined,
  };
}

/** A PEM given inline or as a file path. */
function pem(value: string, name: string): Buffer {
  if (value.trimStart().startsWith('-----BEGIN')) return Buffer.from(value);
  try {
    return readFileSync(value);
  } catch (err) {
    throw new Error(
      `${name}: cannot read ${value} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      { cause: err },
    );
  }
}

/**
 * What `Connection.connect` (client) and `NativeConnection.connect` (worker) need: the same
 * address, TLS and API key for both. With an API key the namespace also travels as the
 * `temporal-namespace` header, which Temporal Cloud's regional endpoints route by.
 */
export function connectionOptions(env: TemporalEnv): {
  address: string;
  tls?: TemporalTls;
  apiKey?: string;
  metadata?: Record<string, string>;
} {
  return {
    address: env.address,
    ...(env.tls ? { tls: env.tls } : {}),
    ...(env.apiKey ? { apiKey: env.apiKey, metadata: { 'temporal-namespace': env.namespace } } : {}),
  };
}

/** Where the server is and how we talk to it, for log lines (never the key itself). */
export function describeConnection(env: TemporalEnv): string {
  const auth = env.apiKey ? ' (TLS, API key)' : env.tls?.clientCertPair ? ' (mTLS)' : env.tls ? ' (TLS)' : '';
  return `${env.address}${auth} namespace=${env.namespace}`;
}

export function runUrl(env: TemporalEnv, workflowId: string): string {
  return `${env.uiUrl}/namespaces/${encodeURIComponent(env.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
