// `node dist/scripts/init-namespace.js`: makes the namespace exist and registers the agent's search
// attributes on it (local-servers/namespace.ts), then waits until queries accept them. Idempotent.
// The deployment runs it once before the worker starts (docker-compose.yml, temporal-init); against
// any other server, run it once with the TEMPORAL_* settings.
import { Connection } from '@temporalio/client';
import { initNamespace, until } from '../local-servers/namespace';
import type { Log } from '../local-servers/namespace';
import { connectionOptions, temporalEnv } from '../runtime/temporal-env';
import { processLog } from '../runtime/process-log';

/** stderr; one JSON object a line with LOG_FORMAT=json. */
const plog = processLog('init-namespace');

async function main(): Promise<void> {
  const env = temporalEnv();
  const log: Log = (line) => plog.info(line);
  const connection = await until(
    `Temporal at ${env.address} reachable`,
    async () => {
      const candidate = await Connection.connect({ ...connectionOptions(env), connectTimeout: 5_000 });
      await candidate.healthService.check({});
      return candidate;
    },
    log,
  );
  try {
    await initNamespace(connection, env.namespace, log);
  } finally {
    await connection.close();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    plog.error(`init-namespace: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
