// The one place that turns settings into a Temporal client, so the CLI, the demo and the tests
// read and write payloads as the worker does (runtime/data-converter.ts).
import { Client, Connection } from '@temporalio/client';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { agentDataConverter } from '../runtime/data-converter';
import { connectionOptions } from '../runtime/temporal-env';
import { clientGrpcInterceptors } from '../runtime/closing-run-retry';
import type { TemporalEnv } from '../runtime/temporal-env';

/** A client on an existing connection, with the data converter from the environment. */
export function newClient(
  connection: Connection,
  namespace: string,
  processEnv: NodeJS.ProcessEnv = process.env,
  /** The OpenTelemetry client interceptor when tracing is on (client/client-tracing.ts). */
  workflowInterceptors: WorkflowClientInterceptor[] = [],
): Client {
  return new Client({
    connection,
    namespace,
    dataConverter: agentDataConverter(processEnv),
    ...(workflowInterceptors.length > 0 ? { interceptors: { workflow: workflowInterceptors } } : {}),
  });
}

/** Connects to env.address and returns a client for env.namespace; close it with client.connection.close(). */
export async function createClient(env: TemporalEnv, processEnv: NodeJS.ProcessEnv = process.env): Promise<Client> {
  const dataConverter = agentDataConverter(processEnv); // a bad key config fails before we connect
  const connection = await Connection.connect({ ...connectionOptions(env), interceptors: clientGrpcInterceptors() });
  return new Client({ connection, namespace: env.namespace, dataConverter });
}
