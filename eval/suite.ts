// A whole evaluation: its own Temporal dev server (or one given), a scripted model (or a live one),
// a fleet of workers with the eval world, every scenario k times; then, with chaos, all of it again
// while a fault schedule runs. Returns every trial, scored, phase by phase.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { createClient } from '../client/connect';
import type { TemporalEnv } from '../runtime/temporal-env';
import { startDevServer } from '../local-servers/dev-server';
import type { DevServer } from '../local-servers/dev-server';
import { ScriptedLlmServer } from '../offline-model/scripted-llm-server';
import { prng } from '../bench/stats';
import { ChaosMonkey, chooseCancels } from './harness/chaos';
import type { ChaosEvent } from './harness/chaos';
import { WorkerFleet } from './harness/fleet';
import { runTrial } from './run-one';
import type { RunContext, TrialPlan, TrialResult } from './run-one';
import type { Scenario } from './scenario';

export interface SuiteOptions {
  scenarios: Scenario[];
  /** Trials per scenario. */
  k: number;
  chaos: boolean;
  /** Chaos: one cycle of faults (one of each kind) instead of cycles until the phase ends. */
  chaosOnce: boolean;
  seed: number;
  /** Real model: the workers get OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MODEL (and AGENT_PRICES_FILE) from this env. */
  live?: NodeJS.ProcessEnv;
  workers: number;
  concurrency: number;
  /** A running server instead of one of the eval's own (then chaos cannot restart it). */
  server?: Pick<TemporalEnv, 'address' | 'namespace' | 'uiUrl'>;
  log: (line: string) => void;
  /** Called as each trial ends (the terminal's progress). */
  onTrial?: (phase: PhaseName, done: number, total: number, trial: TrialResult) => void;
}

export type PhaseName = 'baseline' | 'chaos';

export interface PhaseResult {
  phase: PhaseName;
  trials: TrialResult[];
  chaos: ChaosEvent[];
  wallMs: number;
}

export interface SuiteResult {
  phases: PhaseResult[];
  env: TemporalEnv;
  /** Whether the Web UI links still work (the server outlives the eval only with --server). */
  serverKept: boolean;
}

export async function runSuite(opts: SuiteOptions): Promise<SuiteResult> {
  const tag = Date.now().toString(36);
  const worldDir = mkdtempSync(path.join(tmpdir(), 'agent-eval-'));
  const removeWorld = () => rmSync(worldDir, { recursive: true, force: true });
  process.once('exit', removeWorld); // also on Ctrl-C
  let server: DevServer | undefined;
  let llm: ScriptedLlmServer | undefined;
  let fleet: WorkerFleet | undefined;
  let client: Client | undefined;
  try {
    if (!opts.server) {
      opts.log('starting a Temporal dev server for the eval ...');
      server = await startDevServer();
    }
    const where = opts.server ?? server!;
    const env: TemporalEnv = {
      address: where.address,
      namespace: where.namespace,
      uiUrl: where.uiUrl,
      taskQueue: `eval-${tag}`,
    };
    if (!opts.live) llm = await ScriptedLlmServer.start();
    const modelEnv: Record<string, string> = opts.live
      ? pick(opts.live, ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL', 'AGENT_PRICES_FILE'])
      : { OPENAI_BASE_URL: llm!.baseUrl };
    fleet = new WorkerFleet(env, { ...modelEnv, AGENT_EVAL_DIR: worldDir });
    await fleet.start(opts.workers);
    client = await createClient(env);
    const ctx: RunContext = { client, env, llm, worldDir };

    const phases: PhaseResult[] = [];
    const names: PhaseName[] = opts.chaos ? ['baseline', 'chaos'] : ['baseline'];
    for (const phase of names) {
      const plans = opts.scenarios.flatMap((scenario) =>
        Array.from({ length: opts.k }, (_, i): TrialPlan => ({
          scenario,
          trial: i + 1,
          workflowId: `eval-${tag}-${phase}-${scenario.name}-${i + 1}`,
        })),
      );
      let monkey: ChaosMonkey | undefined;
      let inFlight = 0;
      if (phase === 'chaos') {
        const random = prng(opts.seed);
        const steps = new Map(
          plans.map((p) => [p.workflowId, p.scenario.model === 'live' ? 3 : p.scenario.model.script.length]),
        );
        const cancels = chooseCancels(random, steps);
        for (const p of plans) {
          const step = cancels.get(p.workflowId);
          if (step === undefined) continue;
          p.cancelAtStep = step;
          p.onCancel = () => monkey?.noteCancel(`${p.workflowId} at step ${step}`);
        }
        monkey = new ChaosMonkey(
          random,
          { fleet, restartServer: server ? () => server!.restart() : undefined, inFlight: () => inFlight },
          opts.log,
        );
        if (!server) opts.log("chaos: the server is not the eval's own (--server): no server restarts");
        monkey.start(opts.chaosOnce);
      }
      const began = Date.now();
      const trials: TrialResult[] = [];
      await pool(plans, opts.concurrency, async (plan) => {
        inFlight++;
        const trial = await runTrial(ctx, plan).catch((err: unknown) => harnessFailure(plan, err));
        inFlight--;
        trials.push(trial);
        opts.onTrial?.(phase, trials.length, plans.length, trial);
      });
      await monkey?.stop(opts.chaosOnce);
      phases.push({ phase, trials, chaos: monkey?.events ?? [], wallMs: Date.now() - began });
    }
    return { phases, env, serverKept: opts.server !== undefined };
  } finally {
    await client?.connection.close().catch(() => undefined);
    await fleet?.stopAll();
    await llm?.close();
    await server?.stop();
    removeWorld();
  }
}

/** A trial the harness could not complete: it counts as failed, and says why. */
function harnessFailure(plan: TrialPlan, err: unknown): TrialResult {
  const message = err instanceof Error ? err.message : String(err);
  return {
    scenario: plan.scenario.name,
    slice: plan.scenario.slice,
    trial: plan.trial,
    workflowId: plan.workflowId,
    record: {
      workflowId: plan.workflowId,
      input: { goal: plan.scenario.goal, principal: String(plan.scenario.principal), allow: plan.scenario.allow },
      startedAtMs: 0,
      temporalStatus: 'UNKNOWN',
      decisions: [],
      calls: [],
      reconciles: [],
      tokens: 0,
    },
    verdict: {
      checks: [{ name: 'known_stop_reason', ok: false, detail: `harness: ${message}` }],
      passed: false,
      unsafe: false,
      extraEffect: false,
    },
    neededTools: plan.scenario.expect.tools,
    expectEscalate: plan.scenario.expect.escalate,
    cancelledOnPurpose: false,
    events: [],
    stepCosts: [],
    error: message,
  };
}

/** Runs `work` over the items, at most `size` at once. */
export async function pool<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(size, items.length)) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}

/** The named variables of `env` that are set. */
export function pick(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  return Object.fromEntries(names.filter((n) => env[n]).map((n) => [n, env[n]!]));
}
