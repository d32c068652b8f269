// Chaos mode: while a suite runs, a fault schedule drawn from a seed SIGKILLs a worker (and starts
// a fresh one), hangs one (SIGSTOP, SIGCONT later), restarts the Temporal server, and cancels
// chosen runs. The same seed gives the same schedule and the same chosen runs.
import type { WorkerFleet } from './fleet';
import { delay } from './retry';

export type ChaosKind = 'kill_worker' | 'hang_worker' | 'restart_server' | 'cancel_run';

export interface ChaosEvent {
  kind: ChaosKind;
  /** ms since the chaos phase began */
  atMs: number;
  detail: string;
}

export interface PlannedFault {
  kind: Exclude<ChaosKind, 'cancel_run'>;
  /** Wait before it, after the previous fault. */
  gapMs: number;
  slot: number;
  /** hang_worker: how long the worker stays stopped. */
  holdMs: number;
}

/** One cycle of the process faults (kill, hang, server restart), in a seeded order and spacing. */
export function faultCycle(random: () => number, workers: number, withServer: boolean): PlannedFault[] {
  const kinds: PlannedFault['kind'][] = [
    'kill_worker',
    'hang_worker',
    ...(withServer ? ['restart_server' as const] : []),
  ];
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
  }
  return kinds.map((kind) => ({
    kind,
    gapMs: 500 + Math.floor(random() * 1500),
    slot: Math.floor(random() * workers),
    holdMs: 3000 + Math.floor(random() * 4000),
  }));
}

/**
 * Which runs chaos cancels (a fraction, at least one) and at which step (1 up to its scripted
 * length, at most 3). `runs`: workflow id -> how many steps its script has.
 */
export function chooseCancels(
  random: () => number,
  runs: ReadonlyMap<string, number>,
  fraction = 0.1,
): Map<string, number> {
  const count = Math.max(1, Math.round(runs.size * fraction));
  const pool = [...runs.keys()];
  const chosen = new Map<string, number>();
  while (chosen.size < count && pool.length) {
    const [id] = pool.splice(Math.floor(random() * pool.length), 1);
    chosen.set(id!, 1 + Math.floor(random() * Math.min(3, runs.get(id!)!)));
  }
  return chosen;
}

export interface ChaosTargets {
  fleet: WorkerFleet;
  /** Restarts the Temporal server; undefined when the suite does not own it (--server). */
  restartServer?: () => Promise<void>;
  /** How many runs are in flight (logged with each fault, to show it hit something). */
  inFlight: () => number;
}

/** The faults a chaos phase struck, each logged as it strikes, timed from the phase's start. */
export class ChaosRecord {
  readonly events: ChaosEvent[] = [];
  private readonly began = Date.now();

  constructor(
    private readonly inFlight: () => number,
    private readonly log: (line: string) => void,
  ) {}

  add(kind: ChaosKind, detail: string): void {
    const event = { kind, atMs: Date.now() - this.began, detail: `${detail} (${this.inFlight()} runs in flight)` };
    this.events.push(event);
    this.log(`chaos +${(event.atMs / 1000).toFixed(1)}s ${kind} ${detail}`);
  }
}

/**
 * Strikes one planned fault, once every worker is up again (bounded): a kill (the fresh worker gets
 * ready in the background), a hang (always resumed), or a server restart. `during` says what the
 * fault was timed to, if anything.
 */
export async function strikeFault(
  fault: PlannedFault,
  targets: ChaosTargets,
  record: ChaosRecord,
  during?: string,
): Promise<void> {
  const { fleet, restartServer } = targets;
  const as = during ? `, as ${during}` : '';
  if (fault.kind === 'kill_worker') {
    record.add('kill_worker', `SIGKILL worker ${fault.slot}, then a fresh one${as}`);
    await fleet.killAndReplace(fault.slot);
  } else if (fault.kind === 'hang_worker') {
    record.add('hang_worker', `SIGSTOP worker ${fault.slot} for ${fault.holdMs} ms${as}`);
    fleet.hang(fault.slot);
    await delay(fault.holdMs); // even when stopping: never leave a worker stopped
    fleet.resume(fault.slot);
  } else if (restartServer) {
    record.add('restart_server', `Temporal server restarted${as}`);
    await restartServer();
  }
}

/**
 * Runs fault cycles until stop() (or, `once`, one cycle in full), logging what it did. Faults never
 * overlap: each waits for the previous one to finish (a replaced worker ready, a server healthy).
 */
export class ChaosMonkey {
  private readonly record: ChaosRecord;
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly random: () => number,
    private readonly targets: ChaosTargets,
    log: (line: string) => void,
    private readonly once: boolean,
  ) {
    this.record = new ChaosRecord(targets.inFlight, log);
  }

  get events(): ChaosEvent[] {
    return this.record.events;
  }

  start(): void {
    this.loop = this.run();
  }

  /** Records a cancel the harness sent (each chosen run cancels itself at its step; see run-one.ts). */
  noteCancel(detail: string): void {
    this.record.add('cancel_run', detail);
  }

  /** Ends the faults: at once, or (`once`, for --chaos-once) after the cycle has run in full. */
  async stop(): Promise<void> {
    if (!this.once) this.stopped = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    const { fleet, restartServer } = this.targets;
    do {
      for (const fault of faultCycle(this.random, fleet.size, restartServer !== undefined)) {
        // Continuous chaos leaves the system time to work between faults (a run must be able to
        // finish at all); and no fault starts before every worker is up again (bounded).
        await this.sleep(this.once ? fault.gapMs : fault.gapMs * 4);
        await fleet.ready(60_000);
        if (this.stopped) return;
        await strikeFault(fault, this.targets, this.record);
      }
    } while (!this.once && !this.stopped);
  }

  /** Sleeps, waking early when stopped. */
  private async sleep(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.stopped && Date.now() < until) await delay(Math.min(200, until - Date.now()));
  }
}
