// The eval's workers: N processes of the eval worker (`node dist/eval/worker.js`: the shipped worker
// with the eval's world and tool faults) on one task queue, each slot restartable, so chaos can
// kill, hang and replace them.
import { startWorkerProcess } from '../../local-servers/worker-process';
import type { WorkerProcess } from '../../local-servers/worker-process';
import type { TemporalEnv } from '../../runtime/temporal-env';

const EVAL_WORKER = 'eval/worker.js';

export class WorkerFleet {
  private readonly slots: WorkerProcess[] = [];

  constructor(
    private readonly env: TemporalEnv,
    private readonly workerEnv: Record<string, string>,
  ) {}

  get size(): number {
    return this.slots.length;
  }

  async start(count: number): Promise<void> {
    for (let i = 0; i < count; i++) this.slots.push(startWorkerProcess(this.env, this.workerEnv, EVAL_WORKER));
    await Promise.all(this.slots.map((w) => w.ready));
  }

  /**
   * SIGKILL, then a fresh worker in the same slot. It does not wait for the fresh one to be ready
   * (bundling the workflow code takes a while on a loaded machine): the other workers carry on.
   */
  async killAndReplace(slot: number): Promise<void> {
    await this.slots[slot]!.kill();
    this.slots[slot] = startWorkerProcess(this.env, this.workerEnv, EVAL_WORKER);
  }

  /** Resolves when every worker polls (or after timeoutMs, whichever is first). */
  async ready(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.slots.map((w) => w.ready.catch(() => undefined))),
      new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  hang(slot: number): void {
    this.slots[slot]!.hang();
  }

  resume(slot: number): void {
    this.slots[slot]!.resume();
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.slots.map((w) => w.kill()));
  }
}
