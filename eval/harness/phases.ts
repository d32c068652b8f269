// A suite's phases: the baseline, then (with chaos) the same trials again, fresh runs, while faults
// strike. Each phase runs its trials a few at a time; a trial the harness could not complete counts
// as failed and says why.
import type { ChaosEvent } from './chaos';

export type PhaseName = 'baseline' | 'chaos';

export interface PhaseResult<T> {
  phase: PhaseName;
  trials: T[];
  chaos: ChaosEvent[];
  wallMs: number;
}

/** The faults of a chaos phase, running while its trials run. */
export interface PhaseChaos {
  readonly events: ChaosEvent[];
  /** Ends the faults once the trials are done (a hung worker is always resumed). */
  stop(): Promise<void>;
}

export interface PhasesSpec<P, T, C extends PhaseChaos> {
  chaos: boolean;
  /** Trials in flight at once. */
  concurrency: number;
  /** The trials of a phase; `last`: whether it is the suite's last phase. */
  plans: (phase: PhaseName, last: boolean) => P[];
  /** The chaos phase's faults, started before its trials; `inFlight` counts the trials running. */
  startChaos: (plans: P[], inFlight: () => number) => C;
  run: (plan: P, chaos: C | undefined) => Promise<T>;
  /** The result of a trial the harness could not complete. */
  failed: (plan: P, err: unknown) => T;
  /** Called as each trial ends (the terminal's progress). */
  onTrial?: (phase: PhaseName, done: number, total: number, trial: T) => void;
}

export async function runPhases<P, T, C extends PhaseChaos>(spec: PhasesSpec<P, T, C>): Promise<PhaseResult<T>[]> {
  const names: PhaseName[] = spec.chaos ? ['baseline', 'chaos'] : ['baseline'];
  const phases: PhaseResult<T>[] = [];
  for (const phase of names) {
    const plans = spec.plans(phase, phase === names[names.length - 1]);
    let inFlight = 0;
    const chaos = phase === 'chaos' ? spec.startChaos(plans, () => inFlight) : undefined;
    const began = Date.now();
    const trials: T[] = [];
    await pool(plans, spec.concurrency, async (plan) => {
      inFlight++;
      const trial = await spec.run(plan, chaos).catch((err: unknown) => spec.failed(plan, err));
      inFlight--;
      trials.push(trial);
      spec.onTrial?.(phase, trials.length, plans.length, trial);
    });
    await chaos?.stop();
    phases.push({ phase, trials, chaos: chaos?.events ?? [], wallMs: Date.now() - began });
  }
  return phases;
}

/** Runs `work` over the items, at most `size` at once. */
export async function pool<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(size, items.length)) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}
