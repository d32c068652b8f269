// What cuts a run off: the operator's cancel, or the max_seconds deadline, a workflow timer racing
// the loop so that a slow LLM call is cut off at the deadline rather than noticed after it returns.
// Time a person spends on a wait is not the agent's: when the timer fires during or after such a
// wait, it is re-armed for the deadline moved by it. Whichever comes first decides the ending.
import { CancellationScope, CancelledFailure, condition, isCancellation, sleep } from '@temporalio/workflow';

export interface DeadlineClock {
  startedAtMs: number;
  /** Finished waits for people. */
  humanWaitMs(): number;
  /** The seconds the budget allows now (a top-up of seconds moves the deadline too). */
  maxSeconds(): number;
  /** Whether a person or an operator is being waited for right now. */
  waiting(): boolean;
}

/** How a raced loop came out: its own ending, or cut off (a cancel is rethrown after the run records it). */
export type Raced<T> = { result: T } | { cut: 'max_seconds' } | { cut: 'cancelled'; err: unknown };

export class CutOff {
  /** Set when the max_seconds timer cut the run short before any operator cancel. */
  private intent: 'max_seconds' | undefined;
  private scope: CancellationScope | undefined;

  /** Whether a cancel or a deadline has cut the run off (the loop's scope was cancelled). */
  isCutOff(): boolean {
    return this.scope?.consideredCancelled === true;
  }

  /**
   * After a cancel or a deadline the run ends for that reason, whatever an activity just reported.
   * Also checked before each step: code that runs between awaits (a budget check, continue-as-new)
   * must not carry on, or hand a cancelled run's work to a new run, after the scope was cancelled.
   */
  check(): void {
    if (this.isCutOff()) {
      throw new CancelledFailure(this.intent === 'max_seconds' ? 'max_seconds reached' : 'cancelled by operator');
    }
  }

  /** Runs `loop` in a scope of its own that the deadline or the operator's cancel cancels. */
  async race<T>(clock: DeadlineClock, loop: () => Promise<T>): Promise<Raced<T>> {
    const root = CancellationScope.current();
    const scope = new CancellationScope();
    this.scope = scope;
    let deadlineHit = false;
    void watchDeadline(clock, () => {
      deadlineHit = true;
      // The deadline decides the ending only if the operator had not cancelled first.
      if (!root.consideredCancelled) this.intent ??= 'max_seconds';
      scope.cancel();
    });
    try {
      return { result: await scope.run(loop) };
    } catch (err) {
      if (!isCancellation(err)) throw err;
      if (this.intent === 'max_seconds' || (deadlineHit && !root.consideredCancelled)) return { cut: 'max_seconds' };
      return { cut: 'cancelled', err };
    }
  }
}

/** Calls `onDeadline` once the agent's time is up; returns quietly on a cancel of the workflow. */
async function watchDeadline(clock: DeadlineClock, onDeadline: () => void): Promise<void> {
  try {
    for (;;) {
      const waitedBefore = clock.humanWaitMs();
      const secondsBefore = clock.maxSeconds();
      const deadlineMs = clock.startedAtMs + waitedBefore + secondsBefore * 1000;
      await sleep(Math.max(1, deadlineMs - Date.now()), {
        summary: `run deadline: max_seconds ${secondsBefore}`,
      });
      if (!clock.waiting() && clock.humanWaitMs() === waitedBefore) {
        if (clock.maxSeconds() === secondsBefore) return onDeadline();
        continue;
      }
      await condition(() => !clock.waiting());
    }
  } catch {
    // the workflow itself was cancelled: the run's ending handles it
  }
}
