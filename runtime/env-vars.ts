// Every environment variable the runtime's own processes read (worker, activities, CLI, codec
// server, local server, drills), in one table: name, default, meaning and parser. Readers call
// readEnv(name) instead of touching process.env; docs/configuration.md is written from this table
// (a test checks it both ways). The TEMPORAL_* connection settings are not here: the `temporal`
// CLI's names and profiles, read by runtime/temporal-env.ts.
import { checkPostgresUrl } from './postgres-url';

/** Turns the raw value (undefined when unset) into what the reader needs; throws a one-line error naming the variable. */
type Parser<T> = (raw: string | undefined, name: string) => T;

export type EnvVarGroup = 'llm' | 'worker' | 'codec' | 'cli' | 'local server' | 'drill';

export interface EnvVarSpec<T> {
  group: EnvVarGroup;
  /** The default in words, as the docs state it; '' = unset means off or absent. */
  default: string;
  /** One line: what it does. */
  meaning: string;
  parse: Parser<T>;
  /** Its value is masked wherever text leaves the worker (activities/secrets.ts). */
  secret?: boolean;
}

// ---- parsers ------------------------------------------------------------------------------

/** The trimmed value; unset or blank reads as undefined. */
const text: Parser<string | undefined> = (raw) => raw?.trim() || undefined;
const textOr =
  (fallback: string): Parser<string> =>
  (raw) =>
    raw?.trim() || fallback;
/** `1` turns it on; anything else (or unset) leaves it off. */
const flag: Parser<boolean> = (raw) => raw?.trim() === '1';

const positiveNumber =
  (fallback: number): Parser<number> =>
  (raw, name) => {
    const value = Number(raw?.trim() || fallback);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
    return value;
  };

/** A non-negative integer; unset or blank = 0 (off). */
const count: Parser<number> = (raw, name) => {
  const trimmed = raw?.trim() ?? '';
  if (trimmed === '') return 0;
  const value = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || !Number.isSafeInteger(value))
    throw new Error(`${name} must be a whole number (0 or unset = off), got "${raw}"`);
  return value;
};

const milliseconds: Parser<number> = (raw, name) => {
  const value = Number(raw?.trim() || 0);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a non-negative number of milliseconds, got "${raw}"`);
  return value;
};

/** A TCP port; `allowZero` for "any free port". Unset = the fallback (undefined: the reader picks). */
function port(fallback: number, allowZero?: boolean): Parser<number>;
function port(fallback: undefined, allowZero?: boolean): Parser<number | undefined>;
function port(fallback: number | undefined, allowZero = false): Parser<number | undefined> {
  return (raw, name) => {
    const trimmed = raw?.trim() ?? '';
    if (trimmed === '') return fallback;
    const value = Number(trimmed);
    if (!/^\d+$/.test(trimmed) || value > 65535 || (value === 0 && !allowZero))
      throw new Error(`${name} must be a port number${allowZero ? ' (0 for any free port)' : ''}, got "${raw}"`);
    return value;
  };
}

/** A postgres:// URL (it may carry a password: never echoed); unset or blank = undefined. */
const postgresUrl: Parser<string | undefined> = (raw, name) => {
  const value = raw?.trim();
  if (!value) return undefined;
  checkPostgresUrl(value, name);
  return value;
};

/** A comma-separated list; blank entries dropped; unset or empty = undefined. */
const list: Parser<string[] | undefined> = (raw) => {
  const items = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
};

// ---- the table ----------------------------------------------------------------------------

export const DEFAULT_METRICS_PORT = 9464;
export const DEFAULT_CODEC_PORT = 8888;
export const DEFAULT_REFUNDS_DB = '.temporal/refunds.sqlite';
export const DEFAULT_RETAIL_DB = '.temporal/retail.sqlite';
export const DEFAULT_MODEL = 'gpt-4.1-mini';
export const DEFAULT_DEPLOYMENT_NAME = 'durable-react-agent';
/** The SDK's log levels, least severe first (the same names as @temporalio/common's LogLevel). */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

export const ENV_VARS = {
  // The LLM (worker)
  OPENAI_API_KEY: {
    group: 'llm',
    default: '',
    meaning:
      'API key of the OpenAI-compatible endpoint; the worker refuses to start without it unless OPENAI_BASE_URL is set (a keyless server, or `offline`); without it the demo runs offline',
    parse: text,
    secret: true,
  },
  OPENAI_BASE_URL: {
    group: 'llm',
    default: 'the OpenAI API',
    meaning:
      "base URL of an OpenAI-compatible endpoint (e.g. http://localhost:11434/v1); `offline`: the worker serves the demo's scripted model itself (model `scripted-llm`, no key, no other process)",
    parse: text,
  },
  AGENT_OFFLINE_MODEL_PORT: {
    group: 'llm',
    default: 'any free port',
    meaning:
      'the loopback port of the scripted model the worker serves with OPENAI_BASE_URL=offline (and the demo without a key); 0 = any free port',
    parse: port(0, true),
  },
  OPENAI_MODEL: {
    group: 'llm',
    default: DEFAULT_MODEL,
    meaning: 'the model the decide step asks',
    parse: textOr(DEFAULT_MODEL),
  },
  OPENAI_TIMEOUT_SECONDS: {
    group: 'llm',
    default: '60',
    meaning: 'per-attempt timeout of one LLM call, in seconds (Temporal retries a timed-out attempt)',
    parse: positiveNumber(60),
  },

  AGENT_LLM_TOOL_MODE: {
    group: 'llm',
    default: 'native',
    meaning:
      "`native`: the decide step offers the tools as Chat Completions `tools` and reads the answer's tool call (docs/model-protocol.md); `json`: one JSON object in the message content (`response_format: json_object`), for servers without tool calling",
    parse: (raw, name): 'native' | 'json' => {
      const value = raw?.trim() || 'native';
      if (value !== 'native' && value !== 'json') throw new Error(`${name} must be "native" or "json", got "${raw}"`);
      return value;
    },
  },
  AGENT_PRICES_FILE: {
    group: 'llm',
    default: 'the built-in table (docs/cost.md)',
    meaning:
      'a JSON file of model prices, `{"<model>": {"input_usd_per_mtok": n, "output_usd_per_mtok": n}}`, over the built-in table; a model it cannot price runs with its cost unknown, and a run with a dollar budget on it is refused',
    parse: text,
  },
  // The fleet-wide LLM rate limit (docs/rate-limits.md); off unless a limit is set
  AGENT_LLM_TPM: {
    group: 'llm',
    default: '',
    meaning:
      "tokens per minute every worker's decisions share for this worker's model (a limiter workflow grants them); unset = no limiter",
    parse: count,
  },
  AGENT_LLM_RPM: {
    group: 'llm',
    default: '',
    meaning:
      'requests per minute every worker shares for the model, through the same limiter; unset = no request limit',
    parse: count,
  },
  AGENT_LLM_MAX_IN_FLIGHT: {
    group: 'llm',
    default: '',
    meaning: 'LLM calls in flight at once across the fleet, through the same limiter; unset = no limit',
    parse: count,
  },
  AGENT_LLM_LEASE_TTL_SECONDS: {
    group: 'llm',
    default: 'OPENAI_TIMEOUT_SECONDS + 30',
    meaning: 'a lease its worker never returned (the worker died) is given back after this long',
    parse: (raw, name): number | undefined => (raw?.trim() ? positiveNumber(1)(raw, name) : undefined),
  },
  AGENT_LLM_LIMIT_SCOPE: {
    group: 'llm',
    default: 'model',
    meaning:
      '`model`: one limiter per OPENAI_MODEL; `api-key`: one per API key (named by a hash of it), shared by its models',
    parse: (raw, name): 'model' | 'api-key' => {
      const value = raw?.trim() || 'model';
      if (value !== 'model' && value !== 'api-key')
        throw new Error(`${name} must be "model" or "api-key", got "${raw}"`);
      return value;
    },
  },

  // The worker and its tools
  AGENT_DATA_FILE: {
    group: 'worker',
    default: 'the built-in support data',
    meaning:
      'a JSON file the tools read instead of the built-in support data, on every call (missing or broken: the tool fails and retries)',
    parse: text,
  },
  AGENT_REFUNDS_DB: {
    group: 'worker',
    default: DEFAULT_REFUNDS_DB,
    meaning:
      'the SQLite file of the refunds service, created on the first refund (the demo: a fresh temporary file); unused when AGENT_REFUNDS_DATABASE_URL is set',
    parse: textOr(DEFAULT_REFUNDS_DB),
  },
  AGENT_REFUNDS_DATABASE_URL: {
    group: 'worker',
    default: '',
    meaning:
      'a PostgreSQL URL (`postgres://user:password@host:5432/database`): the refunds ledger there, shared by every worker, its table created on first use; unset = the SQLite file',
    parse: postgresUrl,
    secret: true,
  },
  AGENT_MCP_COMMANDS: {
    group: 'worker',
    default: 'none',
    meaning:
      "programs a run's MCP config may have this worker spawn as stdio servers, comma-separated, exact (docs/mcp.md)",
    parse: list,
  },
  AGENT_DOMAINS: {
    group: 'worker',
    default: 'none',
    meaning:
      'compiled domain folders outside domains/ this worker also runs, comma-separated: each has an index.js exporting `domain` and a backend/ folder whose index.js exports `backend` (docs/domains.md)',
    parse: list,
  },
  AGENT_MCP_URLS: {
    group: 'worker',
    default: 'none',
    meaning: "URL prefixes a run's MCP config may have this worker call, comma-separated (docs/mcp.md)",
    parse: list,
  },
  AGENT_MCP_RUN_SECRET: {
    group: 'worker',
    default: '',
    meaning:
      "a secret the worker and this project's MCP server (`npm run mcp`) share: to a server configured run_identity, the worker proves each request's run with an HMAC of that request, so the server keeps a run's authenticated customer across sessions and no other caller can claim it; unset = authentication lasts one MCP session (docs/mcp.md)",
    parse: text,
    secret: true,
  },
  AGENT_RETAIL_DB: {
    group: 'worker',
    default: DEFAULT_RETAIL_DB,
    meaning:
      "the SQLite file of the retail domain's shop databases (one per conversation, with each write's idempotency key), created on first use; unused when AGENT_RETAIL_DATABASE_URL is set",
    parse: textOr(DEFAULT_RETAIL_DB),
  },
  AGENT_RETAIL_DATABASE_URL: {
    group: 'worker',
    default: '',
    meaning:
      "a PostgreSQL URL (`postgres://user:password@host:5432/database`): the retail domain's shop databases there, shared by every worker, its tables created on first use; unset = the SQLite file",
    parse: postgresUrl,
    secret: true,
  },
  AGENT_METRICS_PORT: {
    group: 'worker',
    default: String(DEFAULT_METRICS_PORT),
    meaning: "port of the worker's Prometheus endpoint; 0 = any free port, `off` = none",
    parse: (raw, name): number | 'off' => {
      if (raw?.trim().toLowerCase() === 'off') return 'off';
      try {
        return port(DEFAULT_METRICS_PORT, true)(raw, name);
      } catch {
        throw new Error(`${name} must be a port number (0 for any free port) or "off", got "${raw}"`);
      }
    },
  },
  AGENT_METRICS_HOST: {
    group: 'worker',
    default: '127.0.0.1',
    meaning: "the address the worker's Prometheus, /healthz and /readyz endpoint listens on (0.0.0.0 in a container)",
    parse: textOr('127.0.0.1'),
  },
  AGENT_SDK_METRICS_PORT: {
    group: 'worker',
    default: 'any free port',
    meaning: "loopback port of the Temporal SDK's own Prometheus exporter, re-served on AGENT_METRICS_PORT",
    parse: port(undefined),
  },
  LOG_FORMAT: {
    group: 'worker',
    default: 'text',
    meaning:
      "the worker's event log on stdout (the SDK's logger: its events, activity logs, one line per tool result): `text` (time level message key=value ...) or `json` (one object a line)",
    parse: (raw, name): 'text' | 'json' => {
      const value = raw?.trim().toLowerCase() || 'text';
      if (value !== 'text' && value !== 'json') throw new Error(`${name} must be "text" or "json", got "${raw}"`);
      return value;
    },
  },
  LOG_LEVEL: {
    group: 'worker',
    default: 'info',
    meaning:
      "the least severe event the worker logs: `trace`, `debug`, `info`, `warn` or `error` (the SDK's native core logs from `warn`, or from `debug`/`trace` when asked)",
    parse: (raw, name): LogLevelName => {
      const value = (raw?.trim() || 'info').toUpperCase();
      if (!(LOG_LEVELS as readonly string[]).includes(value))
        throw new Error(`${name} must be one of trace, debug, info, warn, error; got "${raw}"`);
      return value as LogLevelName;
    },
  },
  AGENT_WORKER_VERSIONING: {
    group: 'worker',
    default: '',
    meaning:
      '`1`: the worker joins a Worker Deployment Version and its runs are pinned to it; it becomes current only if the deployment has none',
    parse: flag,
  },
  AGENT_DEPLOYMENT_NAME: {
    group: 'worker',
    default: DEFAULT_DEPLOYMENT_NAME,
    meaning: 'the Worker Deployment the worker belongs to, with AGENT_WORKER_VERSIONING=1',
    parse: textOr(DEFAULT_DEPLOYMENT_NAME),
  },
  AGENT_BUILD_ID: {
    group: 'worker',
    default: 'package version + commit',
    meaning:
      "the worker's build id within its deployment, with AGENT_WORKER_VERSIONING=1; default `<version>+<commit>` as `npm run build` recorded them",
    parse: text,
  },

  // Payload encryption (worker, CLI, codec server)
  AGENT_CODEC_KEYS: {
    group: 'codec',
    default: '',
    meaning: 'payload encryption keys, `id:base64key,...` (32-byte AES keys); unset = payloads in plain JSON',
    parse: text,
    secret: true,
  },
  AGENT_CODEC_KEY_FILE: {
    group: 'codec',
    default: '',
    meaning: 'instead of AGENT_CODEC_KEYS: a JSON file `{"active": "id", "keys": {"id": "base64"}}`',
    parse: text,
  },
  AGENT_CODEC_ACTIVE_KEY_ID: {
    group: 'codec',
    default: 'the only key',
    meaning: 'the key id that encrypts new payloads (needed when there are several keys)',
    parse: text,
  },
  AGENT_CODEC_TOKEN: {
    group: 'codec',
    default: '',
    meaning:
      "the codec server's shared secret (at least 16 characters): `Authorization: Bearer <token>` or its /login page",
    parse: textOr(''),
    secret: true,
  },
  AGENT_CODEC_CORS_ORIGIN: {
    group: 'codec',
    default: 'the origin of TEMPORAL_UI_URL',
    meaning:
      'the Web UI origin(s) allowed to call the codec server, comma-separated (plus the localhost/127.0.0.1 twin)',
    parse: text,
  },
  AGENT_CODEC_HOST: {
    group: 'codec',
    default: '127.0.0.1',
    meaning: 'the address the codec server listens on (0.0.0.0 in a container)',
    parse: textOr('127.0.0.1'),
  },
  AGENT_CODEC_PORT: {
    group: 'codec',
    default: String(DEFAULT_CODEC_PORT),
    meaning: 'the port the codec server listens on',
    parse: port(DEFAULT_CODEC_PORT, true),
  },
  AGENT_CODEC_SECURE_COOKIE: {
    group: 'codec',
    default: '',
    meaning: '`1` when the codec server is reached over HTTPS (its sign-in cookie is then Secure)',
    parse: flag,
  },
  AGENT_CODEC_ENDPOINT: {
    group: 'codec',
    default: 'http://localhost:AGENT_CODEC_PORT',
    meaning: "the codec server's URL as the browser reaches it, given to the Web UI",
    parse: text,
  },

  // The CLI
  AGENT_SEARCH_ATTRIBUTES: {
    group: 'cli',
    default: 'ask the server',
    meaning: '`on` or `off`: skip the check whether the namespace has the Agent* search attributes',
    parse: (raw): 'on' | 'off' | undefined => {
      const value = raw?.trim().toLowerCase();
      return value === 'on' || value === 'off' ? value : undefined;
    },
  },
  AGENT_OPERATOR: {
    group: 'cli',
    default: '$USER',
    meaning: 'who answered an approval, recorded with the answer',
    parse: text,
  },
  AGENT_DEBUG: {
    group: 'cli',
    default: '',
    meaning: 'set to anything: print stack traces of errors',
    parse: (raw): boolean => Boolean(raw),
  },

  // The local dev server (`npm run server`)
  TEMPORAL_PORT: {
    group: 'local server',
    default: '7233',
    meaning: 'the gRPC port `npm run server` listens on',
    parse: port(7233),
  },
  TEMPORAL_CLI_PATH: {
    group: 'local server',
    default: 'found on PATH, or built with Go',
    meaning: 'the `temporal` binary `npm run server`, the demo and the tests start',
    parse: text,
  },
  TEMPORAL_UI_PORT: {
    group: 'local server',
    default: 'TEMPORAL_PORT + 1000',
    meaning: 'the Web UI port `npm run server` listens on',
    parse: port(undefined),
  },
  TEMPORAL_HTTP_PORT: {
    group: 'local server',
    default: 'any free port',
    meaning: "the dev server's HTTP API port (`npm run server`, the demo); 0 = any free port",
    parse: port(0, true),
  },
  TEMPORAL_METRICS_PORT: {
    group: 'local server',
    default: 'any free port',
    meaning: "the dev server's Prometheus `/metrics` port (`npm run server`, the demo); 0 = any free port",
    parse: port(0, true),
  },
  TEMPORAL_DEV_DB: {
    group: 'local server',
    default: '.temporal/dev.sqlite',
    meaning: 'the SQLite file of the dev server `npm run server` and the demo start (its history stays there)',
    parse: text,
  },
  TEMPORAL_SERVER_PATH: {
    group: 'local server',
    default: "built with Go at the compose file's version",
    meaning: 'the multi-service Temporal server `npm run server -- --postgres` and the postgres test profile start',
    parse: text,
  },
  TEMPORAL_SQL_TOOL_PATH: {
    group: 'local server',
    default: "built with Go at the compose file's version",
    meaning: "the Temporal schema tool (`temporal-sql-tool`) that sets up PostgreSQL's databases",
    parse: text,
  },
  AGENT_POSTGRES_BIN_DIR: {
    group: 'local server',
    default: 'the folder of initdb on PATH, or /usr/lib/postgresql/N/bin',
    meaning: "PostgreSQL's server programs (initdb, postgres, pg_isready) for `--postgres`",
    parse: text,
  },

  // Drills and fault injection (tests; all off by default)
  AGENT_TOOL_PAUSE_MS: {
    group: 'drill',
    default: '0',
    meaning: "a read-only tool's first attempt waits this long (heartbeating, cancellable): a slow backend",
    parse: milliseconds,
  },
  AGENT_TOOL_PAUSE_TOOLS: {
    group: 'drill',
    default: 'every read-only tool',
    meaning: 'which read-only tools AGENT_TOOL_PAUSE_MS slows, comma-separated',
    parse: list,
  },
  AGENT_REFUND_PAUSE_BEFORE_COMMIT_MS: {
    group: 'drill',
    default: '0',
    meaning: "a refund's first attempt hangs this long after planning, before the commit (no heartbeats)",
    parse: milliseconds,
  },
  AGENT_REFUND_PAUSE_AFTER_COMMIT_MS: {
    group: 'drill',
    default: '0',
    meaning: "a refund's first attempt hangs this long after the commit, before it reports (no heartbeats)",
    parse: milliseconds,
  },
  AGENT_EVAL_DIR: {
    group: 'drill',
    default: '',
    meaning:
      "the eval worker only (eval/worker.ts, which `npm run eval` starts): each run's support data, refunds database and injected tool faults are read from this folder (per workflow id); `npm run worker` ignores it",
    parse: text,
  },
  AGENT_REFUND_LOOKUP_FAIL: {
    group: 'drill',
    default: '',
    meaning: '`1`: reconcile_issue_refund refuses every lookup, so a cut-off refund is reported `ambiguous`',
    parse: flag,
  },
} as const satisfies Record<string, EnvVarSpec<unknown>>;

export type EnvVarName = keyof typeof ENV_VARS;
export type EnvValue<N extends EnvVarName> = ReturnType<(typeof ENV_VARS)[N]['parse']>;

export const ENV_VAR_NAMES = Object.keys(ENV_VARS) as EnvVarName[];

/** The variable's value, parsed; throws a one-line error naming it when the value is malformed. */
export function readEnv<N extends EnvVarName>(name: N, env: NodeJS.ProcessEnv = process.env): EnvValue<N> {
  const spec: EnvVarSpec<unknown> = ENV_VARS[name];
  return spec.parse(env[name], name) as EnvValue<N>;
}

/** Names of the variables whose values are secrets. */
export const SECRET_ENV_NAMES = ENV_VAR_NAMES.filter((name) => (ENV_VARS[name] as EnvVarSpec<unknown>).secret);
