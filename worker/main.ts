// `npm run worker`: runs one agent worker until SIGINT/SIGTERM, then drains and exits.
import { NativeConnection } from '@temporalio/worker';
import { temporalEnv } from '../client/temporal-env';
import { llmConfigFromEnv } from '../activities/llm-config';
import { dataSourceFromEnv } from '../activities/tools/data-source';
import { createAgentWorker } from './create-worker';

async function main(): Promise<void> {
  const env = temporalEnv();
  const llm = llmConfigFromEnv();
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect({ address: env.address });
  } catch (err) {
    throw new Error(`cannot reach Temporal at ${env.address} (${(err as Error).message}); start it with \`npm run server\``);
  }
  const worker = await createAgentWorker({
    connection,
    namespace: env.namespace,
    taskQueue: env.taskQueue,
    deps: { llm, data: dataSourceFromEnv() },
  });
  // Worker.run() installs SIGINT/SIGTERM handlers that shut down gracefully.
  console.error(
    `worker ready: ${env.address} namespace=${env.namespace} task queue=${env.taskQueue} model=${llm.model}` +
      (llm.baseURL ? ` llm=${llm.baseURL}` : ''),
  );
  try {
    await worker.run();
  } finally {
    await connection.close();
  }
  console.error('worker stopped');
}

main().catch((err: unknown) => {
  console.error(`worker: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
