// Where Temporal is, how to talk to it, and which task queue the agent uses. Shared by the worker,
// the CLI, the demo and the tests so they always agree.
//
// The connection comes from @temporalio/envconfig, like the `temporal` CLI and every SDK: a profile
// of temporal.toml (TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml; TEMPORAL_PROFILE,
// else "default"), overridden by the standard variables TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
// TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH/_DATA,
// TEMPORAL_TLS_CLIENT_KEY_PATH/_DATA, TEMPORAL_TLS_SERVER_CA_CERT_PATH/_DATA,
// TEMPORAL_TLS_SERVER_NAME, TEMPORAL_GRPC_META_*, overridden in turn by the CLI's flags
// (--address, --namespace, --profile). Nothing set: the local dev server.
// Ours, not envconfig's: TEMPORAL_TASK_QUEUE and TEMPORAL_UI_URL.
import { loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import { processLog } from './process-log';

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
  /** gRPC headers from the profile's grpc_meta or TEMPORAL_GRPC_META_*. */
  metadata?: Record<string, string>;
}

/** What the CLI's flags say; each wins over the environment and the profile. */
export interface ConnectionFlags {
  address?: string;
  namespace?: string;
  profile?: string;
}

export const DEFAULT_TASK_QUEUE = 'react-agent';
export const DEFAULT_ADDRESS = 'localhost:7233';
export const DEFAULT_NAMESPACE = 'default';

/** The names this project read before it used envconfig; still read, with one deprecation line. */
const DEPRECATED_TLS_NAMES = [
  ['TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_CLIENT_CERT'],
  ['TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CLIENT_KEY'],
  ['TEMPORAL_TLS_CA', 'TEMPORAL_TLS_SERVER_CA_CERT'],
] as const;

/**
 * The connection settings. `warn` receives at most one line: the deprecated variables in use.
 * Throws an Error with a one-line message for settings that cannot work.
 */
export function temporalEnv(
  env: NodeJS.ProcessEnv = process.env,
  flags: ConnectionFlags = {},
  warn: (line: string) => void = (line) => processLog('temporal-env').warn(`warning: ${line}`),
): TemporalEnv {
  const vars = standardVars(env, warn);
  const tlsSetting = (vars.TEMPORAL_TLS ?? '').toLowerCase();
  if (tlsSetting !== '' && !['true', 'false', '1', '0'].includes(tlsSetting))
    throw new Error(`TEMPORAL_TLS must be true or false, got "${vars.TEMPORAL_TLS}"`);
  const certSet = vars.TEMPORAL_TLS_CLIENT_CERT_PATH ?? vars.TEMPORAL_TLS_CLIENT_CERT_DATA;
  const keySet = vars.TEMPORAL_TLS_CLIENT_KEY_PATH ?? vars.TEMPORAL_TLS_CLIENT_KEY_DATA;
  if ((certSet === undefined) !== (keySet === undefined))
    throw new Error('TEMPORAL_TLS_CLIENT_CERT_* and TEMPORAL_TLS_CLIENT_KEY_* go together: set both (mTLS) or neither');

  let profile;
  try {
    profile = loadClientConfigProfile({ profile: flags.profile, overrideEnvVars: vars });
  } catch (err) {
    throw new Error(`Temporal client config (temporal.toml): ${(err as Error).message}`, { cause: err });
  }
  if (flags.address) profile.address = flags.address;
  if (flags.namespace) profile.namespace = flags.namespace;
  if (profile.apiKey === '') delete profile.apiKey;
  if (profile.tls?.disabled && profile.apiKey !== undefined)
    throw new Error('TEMPORAL_TLS=false contradicts TEMPORAL_API_KEY: an API key needs TLS');
  if (profile.tls?.disabled && (profile.tls.clientCert || profile.tls.serverCACert || profile.tls.serverName))
    throw new Error('TEMPORAL_TLS=false contradicts TEMPORAL_TLS_*: a certificate or server name needs TLS');

  let options;
  try {
    options = toClientOptions(profile).connectionOptions;
  } catch (err) {
    const { path, code } = err as NodeJS.ErrnoException;
    throw new Error(
      path ? `TLS setting: cannot read ${path} (${code ?? (err as Error).message})` : (err as Error).message,
      { cause: err },
    );
  }
  const apiKey = profile.apiKey;
  const namespace = profile.namespace || DEFAULT_NAMESPACE;
  return {
    address: profile.address || DEFAULT_ADDRESS,
    namespace,
    taskQueue: env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    uiUrl: (env.TEMPORAL_UI_URL || (apiKey ? 'https://cloud.temporal.io' : 'http://localhost:8233')).replace(
      /\/+$/,
      '',
    ),
    tls: tlsOf(options.tls),
    apiKey,
    ...(profile.grpcMeta && Object.keys(profile.grpcMeta).length > 0 ? { metadata: profile.grpcMeta } : {}),
  };
}

/**
 * The environment as envconfig should read it: empty values count as unset (as they always did
 * here), and the deprecated TLS names fill in the standard ones they stand for (a value that
 * starts with -----BEGIN is the PEM itself: the _DATA name; else a file: the _PATH name).
 */
function standardVars(env: NodeJS.ProcessEnv, warn: (line: string) => void): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (value !== '' || name.startsWith('TEMPORAL_GRPC_META_'))) vars[name] = value;
  }
  const used: string[] = [];
  for (const [old, standard] of DEPRECATED_TLS_NAMES) {
    const value = vars[old];
    if (value === undefined) continue;
    used.push(`${old} (now ${standard}_PATH or _DATA)`);
    if (vars[`${standard}_PATH`] !== undefined || vars[`${standard}_DATA`] !== undefined) continue;
    vars[`${standard}_${value.trimStart().startsWith('-----BEGIN') ? 'DATA' : 'PATH'}`] = value;
  }
  if (used.length > 0)
    warn(`deprecated environment variables: ${used.join(', ')}; the old names stop working in a later version`);
  return vars;
}

function tlsOf(tls: unknown): TemporalTls | undefined {
  if (tls === undefined || tls === false || tls === null) return undefined;
  if (tls === true) return {};
  const t = tls as {
    serverNameOverride?: string;
    serverRootCACertificate?: Uint8Array;
    clientCertPair?: { crt: Uint8Array; key: Uint8Array };
  };
  return {
    ...(t.serverNameOverride ? { serverNameOverride: t.serverNameOverride } : {}),
    ...(t.serverRootCACertificate ? { serverRootCACertificate: Buffer.from(t.serverRootCACertificate) } : {}),
    ...(t.clientCertPair
      ? { clientCertPair: { crt: Buffer.from(t.clientCertPair.crt), key: Buffer.from(t.clientCertPair.key) } }
      : {}),
  };
}

/**
 * What `Connection.connect` (client) and `NativeConnection.connect` (worker) need: the same
 * address, TLS, API key and headers for both. With an API key the namespace also travels as the
 * `temporal-namespace` header, which Temporal Cloud's regional endpoints route by.
 */
export function connectionOptions(env: TemporalEnv): {
  address: string;
  tls?: TemporalTls;
  apiKey?: string;
  metadata?: Record<string, string>;
} {
  const metadata = { ...env.metadata, ...(env.apiKey ? { 'temporal-namespace': env.namespace } : {}) };
  return {
    address: env.address,
    ...(env.tls ? { tls: env.tls } : {}),
    ...(env.apiKey ? { apiKey: env.apiKey } : {}),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
}

/** Where the server is and how we talk to it, for log lines (never the key itself). */
export function describeConnection(env: TemporalEnv): string {
  const auth = env.apiKey ? ' (TLS, API key)' : env.tls?.clientCertPair ? ' (mTLS)' : env.tls ? ' (TLS)' : '';
  return `${env.address}${auth} namespace=${env.namespace}`;
}

/** True for the address `npm run server` listens on (nothing configured). */
export function isLocalDefault(env: Pick<TemporalEnv, 'address'>): boolean {
  return /^(localhost|127\.0\.0\.1|\[::1\]):7233$/.test(env.address);
}

/** "cannot reach Temporal at X; <what to do>": start the local server, or check a remote one's settings. */
export function unreachableMessage(env: TemporalEnv): string {
  if (isLocalDefault(env)) return `cannot reach Temporal at ${env.address}; start it with \`npm run server\``;
  const how = env.apiKey ? 'TLS with an API key' : env.tls?.clientCertPair ? 'mTLS' : env.tls ? 'TLS' : 'plain gRPC';
  return (
    `cannot reach Temporal at ${env.address} (${how}); check the address (--address, TEMPORAL_ADDRESS or the ` +
    `profile), that the server is up and reachable from here, and the TLS settings (TEMPORAL_TLS*, TEMPORAL_API_KEY)`
  );
}

export function runUrl(env: Pick<TemporalEnv, 'uiUrl' | 'namespace'>, workflowId: string): string {
  return `${env.uiUrl}/namespaces/${encodeURIComponent(env.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** The Web UI's run list filtered by a visibility query (what `agent list --waiting` prints). */
export function listUrl(env: Pick<TemporalEnv, 'uiUrl' | 'namespace'>, query: string): string {
  return `${env.uiUrl}/namespaces/${encodeURIComponent(env.namespace)}/workflows?query=${encodeURIComponent(query)}`;
}
