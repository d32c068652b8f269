// The τ² suite's chaos: process faults timed to hit writes. The customer's `yes` releases a held
// write, so right after one is sent the write is about to run or running: that is when a worker is
// SIGKILLed (and replaced), a worker SIGSTOPped for a few seconds, or the Temporal server restarted,
// in the seeded order of eval/harness/chaos.ts's fault cycles. One fault at a time, a pause between them.
import type { ChaosEvent } from './chaos';
import { faultCycle } from './chaos';
import type { PlannedFault } from './chaos';
import type { WorkerFleet } from './fleet';
import { delay } from '../run-one';

export interface WriteChaosTargets {
  fleet: WorkerFleet;
  /** Restarts the Temporal server; undefined when the suite does not own it (--server). */
  restartServer?: () => Promise<void>;
  inFlight: () => number;
}

export class WriteChaos {
  readonly events: ChaosEvent[] = [];
  private readonly began = Date.now();
  private queue: PlannedFault[] = [];
  private running: Promise<void> | undefined;
  private quietUntil = 0;

  constructor(
    private readonly random: () => number,
    private readonly targets: WriteChaosTargets,
    private readonly log: (line: string) => void,
  ) {}

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
    const { fleet, restartServer } = this.targets;
    await fleet.ready(60_000); // every worker up again before the next fault
    if (fault.kind === 'kill_worker') {
      this.record('kill_worker', `SIGKILL worker ${fault.slot}, then a fresh one, as ${during}`);
      await fleet.killAndReplace(fault.slot);
    } else if (fault.kind === 'hang_worker') {
      this.record('hang_worker', `SIGSTOP worker ${fault.slot} for ${fault.holdMs} ms, as ${during}`);
      fleet.hang(fault.slot);
      await delay(fault.holdMs);
      fleet.resume(fault.slot);
    } else if (restartServer) {
      this.record('restart_server', `Temporal server restarted, as ${during}`);
      await restartServer();
    }
  }

  private record(kind: ChaosEvent['kind'], detail: string): void {
    const event = {
      kind,
      atMs: Date.now() - this.began,
      detail: `${detail} (${this.targets.inFlight()} runs in flight)`,
    };
    this.events.push(event);
    this.log(`chaos +${(event.atMs / 1000).toFixed(1)}s ${kind} ${detail}`);
  }
}
