// `node dist/scripts/init-namespace.js`: makes the namespace exist and registers the agent's search
// attributes on it (the table in common/search-attributes.ts), then waits until queries accept them.
// Idempotent. The deployment runs it once before the worker starts (docker-compose.yml,
// temporal-init); against any other server, run it once with the TEMPORAL_* settings.
import { Connection } from '@temporalio/client';
import type { ConnectionLike } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { AGENT_SEARCH_ATTRIBUTE_KEYS } from '../common/search-attributes';
import { connectionOptions, temporalEnv } from '../runtime/temporal-env';

const RETENTION = '30 days';
const WAIT_MS = 180_000;
const POLL_MS = 2_000;

type Log = (line: string) => void;

/** Retries `attempt` until it returns something other than undefined, or throws the last error at the deadline. */
async function until<T>(what: string, attempt: () => Promise<T | undefined>, log: Log): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    let failure: unknown;
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (err) {
      failure = err;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: gave up after ${WAIT_MS / 1000} s${failure ? ` (${String(failure)})` : ''}`);
    log(`waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Creates the namespace if needed and registers every missing Agent* attribute; resolves once they are queryable. */
export async function initNamespace(
  connection: Pick<ConnectionLike, 'workflowService' | 'operatorService'>,
  namespace: string,
  log: Log = () => {},
): Promise<void> {
  // Any other reason describe fails (no permission, say) makes the register call fail with its own error.
  const exists = await connection.workflowService.describeNamespace({ namespace }).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs(RETENTION),
    });
    log(`namespace ${namespace} created`);
  }
  // A new namespace takes a few seconds to reach the frontend's cache.
  const { customAttributes } = await until(
    `namespace ${namespace} usable`,
    () => connection.operatorService.listSearchAttributes({ namespace }),
    log,
  );
  const missing = AGENT_SEARCH_ATTRIBUTE_KEYS.filter((key) => !customAttributes?.[key.name]);
  if (missing.length > 0) {
    const types = temporal.api.enums.v1.IndexedValueType;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, types[`INDEXED_VALUE_TYPE_${key.type}`]])),
    });
  }
  for (const key of AGENT_SEARCH_ATTRIBUTE_KEYS)
    log(`search attribute ${key.name} ${missing.includes(key) ? 'registered' : 'already registered'}`);

  // The frontend caches search attributes: wait until a query that uses every one is accepted, so
  // the first run started afterwards can already set them.
  const query = AGENT_SEARCH_ATTRIBUTE_KEYS.map((key) =>
    key.type === 'INT' ? `${key.name} >= 0` : `${key.name} = 'x'`,
  ).join(' AND ');
  await until(
    'search attributes queryable',
    async () => (await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1, query })) && true,
    log,
  );
  log(`namespace ${namespace} is ready for the agent`);
}

async function main(): Promise<void> {
  const env = temporalEnv();
  const log: Log = (line) => console.error(line);
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
    console.error(`init-namespace: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
