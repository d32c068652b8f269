// The scenario suite: every scenario k times in the shared harness (eval/harness/session.ts: a Temporal
// server, the scripted model or a live one, a fleet of eval workers); with chaos, all of it again
// while a fault schedule runs and chosen runs are cancelled. Returns every trial, scored, phase by phase.
import { prng } from '../bench/stats';
import { ChaosMonkey, chooseCancels } from './harness/chaos';
import { runPhases } from './harness/phases';
import { withSession } from './harness/session';
import type { Session } from './harness/session';
import { runTrial } from './run-one';
import type { RunContext, TrialPlan, TrialResult } from './run-one';
import type { Scenario } from './scenario';
import type { SuiteRunOptions, SuiteRunResult } from './harness/suite-options';

export interface SuiteOptions extends SuiteRunOptions<TrialResult> {
  scenarios: Scenario[];
  /** Trials per scenario. */
  k: number;
  /** Chaos: one cycle of faults (one of each kind) instead of cycles until the phase ends. */
  chaosOnce: boolean;
}

export type SuiteResult = SuiteRunResult<TrialResult>;

export async function runSuite(opts: SuiteOptions): Promise<SuiteResult> {
  const session = { name: 'eval', workers: opts.workers, log: opts.log };
  return withSession({ ...session, live: opts.live, server: opts.server }, async (s) => {
    const ctx: RunContext = { client: s.client, env: s.env, llm: s.llm, worldDir: s.worldDir };
    const phases = await runPhases({
      chaos: opts.chaos,
      concurrency: opts.concurrency,
      plans: (phase) =>
        opts.scenarios.flatMap((scenario) =>
          Array.from({ length: opts.k }, (_, i): TrialPlan => ({
            scenario,
            trial: i + 1,
            workflowId: `eval-${s.tag}-${phase}-${scenario.name}-${i + 1}`,
          })),
        ),
      startChaos: (plans, inFlight) => startChaos(opts, s, plans, inFlight),
      run: (plan) => runTrial(ctx, plan),
      failed: harnessFailure,
      ...(opts.onTrial ? { onTrial: opts.onTrial } : {}),
    });
    return { phases, env: s.env, serverKept: s.serverKept };
  });
}

/** The chaos phase's faults, and the runs it cancels (each cancels itself at its chosen step). */
function startChaos(opts: SuiteOptions, s: Session, plans: TrialPlan[], inFlight: () => number): ChaosMonkey {
  const random = prng(opts.seed);
  const steps = new Map(
    plans.map((p) => [p.workflowId, p.scenario.model === 'live' ? 3 : p.scenario.model.script.length]),
  );
  const cancels = chooseCancels(random, steps);
  const monkey = new ChaosMonkey(
    random,
    { fleet: s.fleet, ...(s.restartServer ? { restartServer: s.restartServer } : {}), inFlight },
    opts.log,
    opts.chaosOnce,
  );
  for (const p of plans) {
    const step = cancels.get(p.workflowId);
    if (step === undefined) continue;
    p.cancelAtStep = step;
    p.onCancel = () => monkey.noteCancel(`${p.workflowId} at step ${step}`);
  }
  if (!s.restartServer) opts.log("chaos: the server is not the eval's own (--server): no server restarts");
  monkey.start();
  return monkey;
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
    transcript: [],
    error: message,
  };
}
