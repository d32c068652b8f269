// The eval's worker (`node dist/eval/worker.js`, started by eval/harness/fleet.ts): the shipped worker
// (startAgentWorker, the same defaults and workflow bundle as `npm run worker`) with the
// evaluation's world registered around it: each run's support data and refunds database, the
// refund's commit faults (eval/world.ts), and the activity interceptor that applies the scenario's
// call faults to tool activities (eval/fault-interceptor.ts). `npm run worker` never has any of it.
import { requiredLlmConfigFromEnv } from '../activities/decide/llm-config';
import { readEnv } from '../runtime/env-vars';
import { describeConnection, temporalEnv } from '../runtime/temporal-env';
import { startAgentWorker } from '../worker/start-worker';
import { callFaultInterceptor } from './fault-interceptor';
import { evalWorld } from './world';
import { processLog } from '../runtime/process-log';

const log = processLog('eval worker');

async function main(): Promise<void> {
  const dir = readEnv('AGENT_EVAL_DIR');
  if (!dir) throw new Error('AGENT_EVAL_DIR is not set: the folder of per-run scenario files (npm run eval sets it)');
  const env = temporalEnv(process.env, {}, (text) => log.warn(`eval worker: ${text}`));
  const llm = requiredLlmConfigFromEnv();
  const world = evalWorld(dir);
  const started = await startAgentWorker({
    env,
    llm,
    deps: { data: world.data, refunds: world.refunds, refundFaults: world.refundFaults },
    activityInterceptors: [callFaultInterceptor(world.faultsOfRun)],
    log: (line) => log.info(`eval worker: ${line}`),
  });
  // Worker.run() installs SIGINT/SIGTERM handlers that shut down gracefully.
  await started.run(() =>
    log.info(`eval worker ready: ${describeConnection(env)} task queue=${env.taskQueue} world=${dir}`),
  );
  log.info('eval worker stopped');
}

main().catch((err: unknown) => {
  log.error(`eval worker: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
