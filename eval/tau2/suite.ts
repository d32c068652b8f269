// The τ² retail suite: its own Temporal dev server (or one given), the replay model (or the live one),
// a fleet of eval workers whose retail store is a file in the suite's temp folder, every task k
// times; with chaos, all of it again while workers are killed and hung and the server restarts as
// customers consent to writes (write-chaos.ts), and every write's first attempt stalls around its
// commit (commit-faults.ts).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { createClient } from '../../client/connect';
import { prng } from '../../bench/stats';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { startDevServer } from '../../local-servers/dev-server';
import type { DevServer } from '../../local-servers/dev-server';
import { ScriptedLlmServer } from '../../offline-model/scripted-llm-server';
import type { ChaosEvent } from '../harness/chaos';
import { WorkerFleet } from '../harness/fleet';
import { pick, pool } from '../suite';
import type { PhaseName } from '../suite';
import type { CustomerLlm } from './customer';
import type { RetailDB } from '../../domains/retail/db';
import { DbHasher } from './db-hash';
import { expectedState } from './expected';
import { planReplay } from './replay-plan';
import { RETAIL_DB_ENV } from './run-db';
import { runTaskTrial } from './run-task';
import { WriteChaos } from '../harness/write-chaos';
import { writeCommitFaults } from './commit-faults';
import type { SuiteMode, TaskContext, TaskTrialPlan, TaskTrialResult } from './run-task';
import type { Tau2Task } from './task';

export interface Tau2SuiteOptions {
  tasks: Tau2Task[];
  mode: SuiteMode;
  trials: number;
  chaos: boolean;
  seed: number;
  /** Live: the model settings of the workers and of the customer simulator. */
  live?: NodeJS.ProcessEnv;
  workers: number;
  concurrency: number;
  dumpDir?: string;
  server?: Pick<TemporalEnv, 'address' | 'namespace' | 'uiUrl'>;
  log: (line: string) => void;
  onTrial?: (phase: PhaseName, done: number, total: number, trial: TaskTrialResult) => void;
}

export interface Tau2PhaseResult {
  phase: PhaseName;
  trials: TaskTrialResult[];
  chaos: ChaosEvent[];
  wallMs: number;
}

export interface Tau2SuiteResult {
  phases: Tau2PhaseResult[];
  env: TemporalEnv;
  serverKept: boolean;
  /** Computing every task's expected end state and replay plan. */
  planningMs: number;
}

export async function runTau2Suite(opts: Tau2SuiteOptions): Promise<Tau2SuiteResult> {
  const planningBegan = Date.now();
  const hasher = new DbHasher();
  const hash = (db: RetailDB) => hasher.hash(db);
  const prepared = opts.tasks.map((task) => ({ task, expected: expectedState(task, hash), replay: planReplay(task) }));
  const planningMs = Date.now() - planningBegan;
  const tag = Date.now().toString(36);
  const worldDir = mkdtempSync(path.join(tmpdir(), 'agent-tau2-'));
  const removeWorld = () => rmSync(worldDir, { recursive: true, force: true });
  process.once('exit', removeWorld); // also on Ctrl-C
  if (opts.dumpDir) mkdirSync(opts.dumpDir, { recursive: true });
  let server: DevServer | undefined;
  let llm: ScriptedLlmServer | undefined;
  let fleet: WorkerFleet | undefined;
  let client: Client | undefined;
  try {
    if (!opts.server) {
      opts.log('starting a Temporal dev server for the suite ...');
      server = await startDevServer();
    }
    const where = opts.server ?? server!;
    const env: TemporalEnv = {
      address: where.address,
      namespace: where.namespace,
      uiUrl: where.uiUrl,
      taskQueue: `tau2-${tag}`,
    };
    if (opts.mode !== 'live') llm = await ScriptedLlmServer.start();
    const modelEnv: Record<string, string> =
      opts.live && opts.mode === 'live'
        ? pick(opts.live, ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL', 'AGENT_PRICES_FILE'])
        : { OPENAI_BASE_URL: llm!.baseUrl };
    const retailDbFile = path.join(worldDir, 'retail.sqlite');
    fleet = new WorkerFleet(env, { ...modelEnv, AGENT_EVAL_DIR: worldDir, [RETAIL_DB_ENV]: retailDbFile });
    opts.log(`starting ${opts.workers} workers ...`);
    await fleet.start(opts.workers);
    client = await createClient(env);
    const ctx: TaskContext = {
      client,
      env,
      mode: opts.mode,
      ...(llm ? { llm } : {}),
      ...(opts.mode === 'live' && opts.live ? { customerLlm: customerLlmOf(opts.live) } : {}),
      // The scripted server plays τ²'s user simulator too, through the live customer's requests.
      ...(opts.mode === 'live-scripted'
        ? { customerLlm: { baseURL: llm!.baseUrl, apiKey: 'not-set', model: 'scripted-llm' } }
        : {}),
      retailDbFile,
      hash,
      ...(opts.dumpDir ? { dumpDir: opts.dumpDir } : {}),
    };

    const phases: Tau2PhaseResult[] = [];
    const names: PhaseName[] = opts.chaos ? ['baseline', 'chaos'] : ['baseline'];
    for (const phase of names) {
      const last = phase === names[names.length - 1];
      const plans = prepared.flatMap(({ task, expected, replay }) =>
        Array.from({ length: opts.trials }, (_, i): TaskTrialPlan => ({
          task,
          expected,
          replay,
          trial: i + 1,
          workflowId: `tau2-${tag}-${phase}-${task.id}-${i + 1}`,
          // The end state of the last phase's first trial is the one dumped.
          dump: last && i === 0,
        })),
      );
      let inFlight = 0;
      let chaos: WriteChaos | undefined;
      if (phase === 'chaos') {
        chaos = new WriteChaos(
          prng(opts.seed),
          { fleet, restartServer: server ? () => server!.restart() : undefined, inFlight: () => inFlight },
          opts.log,
        );
        if (!server) opts.log("chaos: the server is not the suite's own (--server): no server restarts");
        const stalls = prng(opts.seed + 1);
        for (const plan of plans) plan.commitFault = writeCommitFaults(worldDir, plan.workflowId, stalls);
      }
      const phaseCtx: TaskContext = chaos ? { ...ctx, onConsent: (id, tool) => chaos.consented(id, tool) } : ctx;
      const began = Date.now();
      const trials: TaskTrialResult[] = [];
      await pool(plans, opts.concurrency, async (plan) => {
        inFlight++;
        const trial = await runTaskTrial(phaseCtx, plan).catch((err: unknown) => harnessFailure(plan, err));
        inFlight--;
        trials.push(trial);
        opts.onTrial?.(phase, trials.length, plans.length, trial);
      });
      await chaos?.stop();
      phases.push({ phase, trials, chaos: chaos?.events ?? [], wallMs: Date.now() - began });
    }
    return { phases, env, serverKept: opts.server !== undefined, planningMs };
  } finally {
    await client?.connection.close().catch(() => undefined);
    await fleet?.stopAll();
    await llm?.close();
    await server?.stop();
    removeWorld();
  }
}

/** The customer simulator uses the agent's endpoint and model (OPENAI_CUSTOMER_MODEL overrides the model). */
function customerLlmOf(env: NodeJS.ProcessEnv): CustomerLlm {
  return {
    apiKey: env.OPENAI_API_KEY ?? 'not-set',
    ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
    model: env.OPENAI_CUSTOMER_MODEL ?? env.OPENAI_MODEL ?? 'gpt-4.1-mini',
  };
}

function harnessFailure(plan: TaskTrialPlan, err: unknown): TaskTrialResult {
  return {
    task_id: plan.task.id,
    trial: plan.trial,
    workflow_id: plan.workflowId,
    passed: false,
    db_match: false,
    expected_hash: plan.expected.hash,
    end_hash: null,
    stop_reason: null,
    steps: 0,
    tool_calls: 0,
    tokens: 0,
    cost_usd: null,
    answer: null,
    gold_writes: plan.expected.writes,
    applied_writes: null,
    duplicate_writes: 0,
    effects_confirmed: 0,
    effects_reconciled: 0,
    customer_messages: 0,
    latency_ms: 0,
    prompt_tokens: 0,
    cached_prompt_tokens: null,
    transcript: [],
    trajectory: [],
    error: `harness: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
  };
}
