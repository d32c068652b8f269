// The τ² retail suite in the shared harness (eval/harness/session.ts): a Temporal server, the replay
// model (or the live one), a fleet of eval workers whose retail store is a file in the session's temp
// folder, every task k times; with chaos, all of it again while workers are killed and hung and the
// server restarts as customers consent to writes (eval/harness/write-chaos.ts), and every write's first
// attempt stalls around its commit (commit-faults.ts).
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { prng } from '../../bench/stats';
import { runPhases } from '../harness/phases';
import { withSession } from '../harness/session';
import type { Session } from '../harness/session';
import { WriteChaos } from '../harness/write-chaos';
import type { SuiteRunOptions, SuiteRunResult } from '../harness/suite-options';
import type { CustomerLlm } from './customer';
import type { RetailDB } from '../../domains/retail/db';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { DbHasher } from './db-hash';
import { expectedState } from './expected';
import type { ExpectedState } from './expected';
import { planReplay } from './replay-plan';
import type { ReplayPlan } from './replay-plan';
import { RETAIL_DB_ENV } from './run-db';
import { runTaskTrial } from './run-task';
import { writeCommitFaults } from './commit-faults';
import type { SuiteMode, TaskContext, TaskTrialPlan, TaskTrialResult } from './run-task';
import type { Tau2Task } from './task';

export interface Tau2SuiteOptions extends SuiteRunOptions<TaskTrialResult> {
  tasks: Tau2Task[];
  mode: SuiteMode;
  trials: number;
  /** Live: the model settings of the workers and of the customer simulator. */
  live?: NodeJS.ProcessEnv;
  dumpDir?: string;
}

export interface Tau2SuiteResult extends SuiteRunResult<TaskTrialResult> {
  /** Computing every task's expected end state and replay plan. */
  planningMs: number;
}

interface PreparedTask {
  task: Tau2Task;
  expected: ExpectedState;
  replay: ReplayPlan;
}

export async function runTau2Suite(opts: Tau2SuiteOptions): Promise<Tau2SuiteResult> {
  let hasher: DbHasher | undefined;
  const hash = (db: RetailDB) => hasher!.hash(db);
  let prepared: PreparedTask[] = [];
  let planningMs = 0;
  // Every task's expected end state and replay plan, computed while the workers boot (withSession).
  const plan = () => {
    const began = Date.now();
    const base = loadRetailDb(); // read only: the plans and the hasher share one copy
    hasher = new DbHasher(base);
    prepared = opts.tasks.map((task) => ({
      task,
      expected: expectedState(task, hash),
      replay: planReplay(task, base),
    }));
    planningMs = Date.now() - began;
  };
  if (opts.dumpDir) mkdirSync(opts.dumpDir, { recursive: true });
  const live = opts.mode === 'live' ? opts.live : undefined;
  const retailDb = (worldDir: string) => path.join(worldDir, 'retail.sqlite');
  const session = { name: 'tau2', live, workers: opts.workers, server: opts.server, log: opts.log };
  const workerEnv = (dir: string) => ({ [RETAIL_DB_ENV]: retailDb(dir) });
  return withSession({ ...session, workerEnv, whileWorkersStart: plan }, async (s) => {
    const ctx: TaskContext = {
      client: s.client,
      env: s.env,
      mode: opts.mode,
      ...(s.llm ? { llm: s.llm } : {}),
      ...(live ? { customerLlm: customerLlmOf(live) } : {}),
      // The scripted server plays τ²'s user simulator too, through the live customer's requests.
      ...(opts.mode === 'live-scripted'
        ? { customerLlm: { baseURL: s.llm!.baseUrl, apiKey: 'not-set', model: 'scripted-llm' } }
        : {}),
      retailDbFile: retailDb(s.worldDir),
      hash,
      ...(opts.dumpDir ? { dumpDir: opts.dumpDir } : {}),
    };
    const phases = await runPhases({
      chaos: opts.chaos,
      concurrency: opts.concurrency,
      plans: (phase, last) => taskPlans(prepared, opts.trials, `tau2-${s.tag}-${phase}`, last),
      startChaos: (plans, inFlight) => startChaos(opts, s, plans, inFlight),
      run: (plan, chaos) =>
        runTaskTrial(chaos ? { ...ctx, onConsent: (id, tool) => chaos.consented(id, tool) } : ctx, plan),
      failed: harnessFailure,
      ...(opts.onTrial ? { onTrial: opts.onTrial } : {}),
    });
    return { phases, env: s.env, serverKept: s.serverKept, planningMs };
  });
}

/** Each task's trials in a phase; the end state of the last phase's first trial is the one dumped. */
function taskPlans(prepared: PreparedTask[], trials: number, idPrefix: string, last: boolean): TaskTrialPlan[] {
  return prepared.flatMap(({ task, expected, replay }) =>
    Array.from({ length: trials }, (_, i): TaskTrialPlan => ({
      task,
      expected,
      replay,
      trial: i + 1,
      workflowId: `${idPrefix}-${task.id}-${i + 1}`,
      dump: last && i === 0,
    })),
  );
}

/** Process faults released by the customers' consents, and a commit stall in every write of every run. */
function startChaos(opts: Tau2SuiteOptions, s: Session, plans: TaskTrialPlan[], inFlight: () => number): WriteChaos {
  const chaos = new WriteChaos(
    prng(opts.seed),
    { fleet: s.fleet, ...(s.restartServer ? { restartServer: s.restartServer } : {}), inFlight },
    opts.log,
  );
  if (!s.restartServer) opts.log("chaos: the server is not the suite's own (--server): no server restarts");
  const stalls = prng(opts.seed + 1);
  for (const plan of plans) plan.commitFault = writeCommitFaults(s.worldDir, plan.workflowId, stalls);
  return chaos;
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
