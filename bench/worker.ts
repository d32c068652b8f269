// The worker process of the benchmark: the shipped worker (startAgentWorker, the same defaults as
// `npm run worker`, the same prebuilt workflow bundle) plus what a benchmark needs around it:
//  - BENCH_WORKER_OVERRIDES: JSON of extra Worker options (the tuning experiments);
//  - BENCH_DATA_CONVERTER: a module exporting `dataConverter` (hook for the payload codec);
//  - BENCH_WORKFLOWS=floor: the floor phase's bare workflow (bench/floor/floor-workflow.ts) instead of the agent;
//  - metrics on, as `npm run worker` has them by default (the SDK's Prometheus exporter and the
//    agent's own registry and sink; nobody scrapes them here); BENCH_WORKER_METRICS=off turns them off;
//  - IPC: {type:'ready'} once the worker polls; {type:'stats'} -> its own CPU time and RSS, measured
//    from inside (process.resourceUsage), which also covers the Rust core threads of the process.
import type { WorkerOptions } from '@temporalio/worker';
import { temporalEnv } from '../runtime/temporal-env';
import { llmConfigFromEnv } from '../activities/decide/llm-config';
import { freeLoopbackPort } from '../worker/metrics-server';
import { startAgentWorker } from '../worker/start-worker';
import { readStats } from './stats';

async function main(): Promise<void> {
  const env = temporalEnv();
  const overrides: Partial<WorkerOptions> = process.env.BENCH_WORKER_OVERRIDES
    ? JSON.parse(process.env.BENCH_WORKER_OVERRIDES)
    : {};
  if (process.env.BENCH_DATA_CONVERTER) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(process.env.BENCH_DATA_CONVERTER) as { dataConverter?: WorkerOptions['dataConverter'] };
    if (!mod.dataConverter) throw new Error(`${process.env.BENCH_DATA_CONVERTER} exports no dataConverter`);
    overrides.dataConverter = mod.dataConverter;
  }
  if (process.env.BENCH_WORKFLOWS === 'floor') {
    // The floor phase's bare workflow instead of the agent's (bundled now: it is not in the prebuilt bundle).
    overrides.workflowBundle = undefined;
    overrides.workflowsPath = require.resolve('./floor/floor-workflow');
  }
  const withMetrics = process.env.BENCH_WORKER_METRICS !== 'off';
  // AGENT_LLM_TPM and friends, as `npm run worker` reads them (the limiter phase sets them).
  const started = await startAgentWorker({
    env,
    llm: llmConfigFromEnv(),
    ...(withMetrics ? { sdkMetricsPort: await freeLoopbackPort() } : {}),
    overrides,
  });
  // Never outlive the benchmark that started us.
  process.on('disconnect', () => process.exit(1));
  process.on('message', (msg: { type?: string }) => {
    if (msg?.type === 'stats') process.send?.(readStats());
    if (msg?.type === 'shutdown') started.worker.shutdown();
  });
  await started.run(() => {
    process.send?.({ type: 'ready', at: Date.now() });
  });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`bench worker: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
