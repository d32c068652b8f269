// `npm run codec-server`: the HTTP codec server for the Temporal Web UI and CLI (see
// codec-server/http-server.ts). Configuration, all from the environment:
//   AGENT_CODEC_KEYS / AGENT_CODEC_KEY_FILE (+ AGENT_CODEC_ACTIVE_KEY_ID)  the same keys the worker uses
//   AGENT_CODEC_TOKEN        required shared secret (>= 16 chars): `Authorization: Bearer <token>`, or /login
//   AGENT_CODEC_CORS_ORIGIN  the Web UI origin(s), comma-separated (default: the origin of TEMPORAL_UI_URL)
//   AGENT_CODEC_PORT         default 8888;  AGENT_CODEC_HOST  default 127.0.0.1 (0.0.0.0 in a container)
//   AGENT_CODEC_SECURE_COOKIE=1  when served over HTTPS (directly or behind a TLS proxy)
import { codecFromEnv } from '../runtime/data-converter';
import { normaliseOrigin, startCodecServer } from './http-server';
import { readEnv } from '../runtime/env-vars';
import { loadDotEnv } from '../runtime/dotenv';
import { temporalEnv } from '../runtime/temporal-env';
import { processLog } from '../runtime/process-log';

/** stderr; one JSON object a line with LOG_FORMAT=json. */
const log = processLog('codec-server');

async function main(): Promise<void> {
  loadDotEnv(); // before anything reads the environment
  const codec = codecFromEnv();
  if (!codec)
    throw new Error(
      'no codec keys: set AGENT_CODEC_KEYS (id:base64key,...) or AGENT_CODEC_KEY_FILE, the same as the worker',
    );
  const token = readEnv('AGENT_CODEC_TOKEN');
  if (token.length < 16)
    throw new Error(
      'AGENT_CODEC_TOKEN must be set to a secret of at least 16 characters (e.g. `openssl rand -hex 24`)',
    );
  const originSetting = readEnv('AGENT_CODEC_CORS_ORIGIN') ?? localTwins(temporalEnv().uiUrl);
  let allowedOrigins: string[];
  try {
    allowedOrigins = originSetting
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean)
      .map(normaliseOrigin);
  } catch {
    throw new Error(
      `AGENT_CODEC_CORS_ORIGIN must be a comma-separated list of origins like http://localhost:8233, got "${originSetting}"`,
    );
  }
  if (allowedOrigins.length === 0) throw new Error('AGENT_CODEC_CORS_ORIGIN names no origin');
  const port = readEnv('AGENT_CODEC_PORT');

  const server = await startCodecServer({
    codec,
    token,
    allowedOrigins,
    port,
    host: readEnv('AGENT_CODEC_HOST'),
    secureCookie: readEnv('AGENT_CODEC_SECURE_COOKIE'),
  });
  log.info(
    `codec server listening on ${server.url} (active key id ${codec.activeKeyId}; CORS origin(s) ${allowedOrigins.join(', ')}); ` +
      `browsers sign in at ${server.url}/login`,
  );
  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** The local Web UI answers as localhost and as 127.0.0.1, which browsers treat as two origins. */
function localTwins(uiUrl: string): string {
  try {
    const url = new URL(uiUrl);
    const twin = url.hostname === 'localhost' ? '127.0.0.1' : url.hostname === '127.0.0.1' ? 'localhost' : undefined;
    return twin ? `${url.origin},${url.protocol}//${twin}:${url.port}` : url.origin;
  } catch {
    return uiUrl;
  }
}

main().catch((err: unknown) => {
  log.error(`codec-server: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
