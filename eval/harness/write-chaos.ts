// Chaos timed to hit writes: a customer's `yes` releases a held write, so right after one is sent
// the write is about to run or running: that is when a worker is SIGKILLed (and replaced), a worker
// SIGSTOPped for a few seconds, or the Temporal server restarted, in the seeded order of chaos.ts's
// fault cycles. One fault at a time, a pause between them. The τ² suite uses it.
import { ChaosRecord, faultCycle, strikeFault } from './chaos';
import type { ChaosEvent, ChaosTargets, PlannedFault } from './chaos';

export class WriteChaos {
  private readonly record: ChaosRecord;
  private queue: PlannedFault[] = [];
  private running: Promise<void> | undefined;
  private quietUntil = 0;

  constructor(
    private readonly random: () => number,
    private readonly targets: ChaosTargets,
    log: (line: string) => void,
  ) {
    this.record = new ChaosRecord(targets.inFlight, log);
  }

  get events(): ChaosEvent[] {
    return this.record.events;
  }

  /** A customer consented to a write in run `workflowId`: strike now, unless a fault is under way or just ended. */
  consented(workflowId: string, tool: string): void {
    if (this.running || Date.now() < this.quietUntil) return;
    if (this.queue.length === 0)
      this.queue = faultCycle(this.random, this.targets.fleet.size, this.targets.restartServer !== undefined);
    const fault = this.queue.shift()!;
    this.running = this.strike(fault, `${workflowId} consented to ${tool}`).finally(() => {
      this.running = undefined;
      // The gap lets runs make progress between faults (each must be able to finish at all).
      this.quietUntil = Date.now() + fault.gapMs * 2;
    });
  }

  /** Waits for the fault under way, if any (a hung worker is always resumed). */
  async stop(): Promise<void> {
    await this.running;
  }

  private async strike(fault: PlannedFault, during: string): Promise<void> {
    await this.targets.fleet.ready(60_000); // every worker up again before the next fault
    await strikeFault(fault, this.targets, this.record, during);
  }
}
