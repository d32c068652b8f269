// Makes a namespace exist and registers the agent's search attributes on it (the table in
// common/temporal/search-attributes.ts), then waits until queries accept them. Idempotent: the
// local servers call it, and so does the deployment's one-shot scripts/init-namespace.ts.
import type { ConnectionLike } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { AGENT_SEARCH_ATTRIBUTE_KEYS } from '../common/temporal/search-attributes';

const RETENTION = '30 days';
const WAIT_MS = 180_000;
const POLL_MS = 2_000;

export type Log = (line: string) => void;

/** Retries `attempt` until it returns something other than undefined, or throws the last error at the deadline. */
export async function until<T>(what: string, attempt: () => Promise<T | undefined>, log: Log): Promise<T> {
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
