// The before/after that end-to-end test files share: a scripted model (a real HTTP server), a worker
// process on a task queue of the file's own, and a client like the CLI's; all of it ended in
// after(), whether or not the tests passed. A file calls agentFixture() once at its top level and
// reads fixture.llm, fixture.client, ... inside its tests (they exist once before() has run).
// What a file sets up around the fixture goes into `prepare` and `setup`, not into a top-level
// before() of its own: Node 20 starts top-level before() hooks without waiting for the earlier ones.
import { after, before } from 'node:test';
import type { Client } from '@temporalio/client';
import { ScriptedLlmServer } from '../../offline-model/scripted-llm-server';
import type { RecordedRequest, Script, StartOptions } from '../../offline-model/scripted-llm-server';
import { runResult, startRun } from '../../client/agent-client';
import type { TemporalEnv } from '../../runtime/temporal-env';
import type { AgentInput, AgentResult } from '../../common/types';
import { agentInput, connectClient, testEnv, uniqueId } from './harness';
import { WorkerFleet } from '../../local-servers/worker-process';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { refundFixture } from './refund-fixtures';
import type { RefundFixture } from './refund-fixtures';

export interface AgentFixtureOptions {
  /** Prefix of the file's task queue (a unique suffix is added). */
  queue: string;
  /**
   * The worker's env on top of OPENAI_BASE_URL (and, with `refunds`, the refund fixture's files); a
   * function is called in before(), after `prepare`.
   */
  workerEnv?: Record<string, string> | (() => Record<string, string>);
  /**
   * A support-data file with paying users and a refunds ledger of the file's own (refund-fixtures.ts):
   * SQLite on the dev server, the profile's PostgreSQL with `--server postgres`.
   */
  refunds?: boolean;
  /** With `refunds`: the ledger in this PostgreSQL instead (called in before(), after `prepare`). */
  refundsLedgerUrl?: () => string;
  /** false: no worker in before(); the file starts its workers with startWorker(). */
  worker?: boolean;
  /** The scripted model's start options (a default script). */
  llm?: StartOptions;
  /** The client's codec settings (default: this process's env). */
  clientEnv?: NodeJS.ProcessEnv;
  /** A server other than the suite's dev server (one that `prepare` starts). */
  server?: () => Pick<TemporalEnv, 'address' | 'namespace' | 'uiUrl'>;
  /** Runs first in before(): what the fixture needs (a server of the file's own, data files). */
  prepare?: () => Promise<void> | void;
  /** Runs last in before(), with the fixture ready: more workers, runs the tests read. */
  setup?: (fixture: AgentFixture) => Promise<void> | void;
}

export interface StartedRun {
  id: string;
  handle: Awaited<ReturnType<typeof startRun>>;
}

export interface RunOptions {
  /** Another task queue (default: the fixture's env). */
  on?: TemporalEnv;
  /** The workflow id (default: a fresh one). */
  id?: string;
}

export interface FinishedRun extends StartedRun {
  result: AgentResult;
  /** What the scripted model received from this run. */
  requests: RecordedRequest[];
  /** From the start request to the result. */
  ms: number;
}

export interface AgentFixture {
  readonly llm: ScriptedLlmServer;
  /** The file's task queue on the test server. */
  readonly env: TemporalEnv;
  readonly client: Client;
  /** The worker started in before() on env (none with `worker: false`). */
  readonly worker: WorkerProcess;
  /** Only with `refunds: true`. */
  readonly refunds: RefundFixture;
  /** The base env every worker of this fixture gets: the scripted model, the refund fixture's files. */
  readonly baseWorkerEnv: Record<string, string>;
  /** Another task queue of the file's own, on the same server. */
  queue(prefix: string): TemporalEnv;
  /** Starts a worker with the base env plus extraEnv (on env unless told); ended in after(). */
  startWorker(extraEnv?: Record<string, string>, on?: TemporalEnv): WorkerProcess;
  /** Scripts the model for a fresh workflow id and starts agentInput(overrides) on env. */
  start(script: Script, overrides?: Partial<AgentInput>, opts?: RunOptions): Promise<StartedRun>;
  /** start(), then waits for the run's result. */
  run(script: Script, overrides?: Partial<AgentInput>, opts?: RunOptions): Promise<FinishedRun>;
}

export function agentFixture(options: AgentFixtureOptions): AgentFixture {
  const fleet = new WorkerFleet();
  let llm: ScriptedLlmServer | undefined;
  let env: TemporalEnv | undefined;
  let client: Client | undefined;
  let worker: WorkerProcess | undefined;
  let refunds: RefundFixture | undefined;
  const queues: TemporalEnv[] = [];

  const ready = <T>(value: T | undefined, what: string): T =>
    value ?? assertNever(`agentFixture(${options.queue}): no ${what} (used before before() ran, or not asked for)`);

  const fixture: AgentFixture = {
    get llm() {
      return ready(llm, 'scripted model');
    },
    get env() {
      return ready(env, 'task queue');
    },
    get client() {
      return ready(client, 'client');
    },
    get worker() {
      return ready(worker, 'worker');
    },
    get refunds() {
      return ready(refunds, 'refund fixture');
    },
    get baseWorkerEnv() {
      return { OPENAI_BASE_URL: fixture.llm.baseUrl, ...refunds?.workerEnv };
    },
    queue(prefix) {
      const server = options.server?.();
      const made = testEnv(uniqueId(prefix), server ? { ...server } : {});
      queues.push(made);
      return made;
    },
    startWorker(extraEnv = {}, on = fixture.env) {
      return fleet.start(on, { ...fixture.baseWorkerEnv, ...extraEnv });
    },
    async start(script, overrides = {}, { on = fixture.env, id = uniqueId(options.queue) } = {}) {
      fixture.llm.script(id, script);
      return { id, handle: await startRun(fixture.client, on, agentInput(overrides), id) };
    },
    async run(script, overrides, opts) {
      const started = Date.now();
      const { id, handle } = await fixture.start(script, overrides, opts);
      const result = await runResult(handle);
      return { id, handle, result, requests: fixture.llm.requests(id), ms: Date.now() - started };
    },
  };

  before(async () => {
    await options.prepare?.();
    llm = await ScriptedLlmServer.start(options.llm);
    if (options.refunds)
      refunds = await refundFixture({ label: options.queue, ledgerUrl: options.refundsLedgerUrl?.() });
    env = fixture.queue(options.queue);
    if (options.worker !== false) {
      worker = fixture.startWorker(typeof options.workerEnv === 'function' ? options.workerEnv() : options.workerEnv);
      await worker.ready;
    }
    client = await connectClient(env, options.clientEnv);
    await options.setup?.(fixture);
  });

  after(async () => {
    // Runs a test left open (a conversation still waiting, a run on a hung model) would outlive
    // this file's workers, and a later file's `cancel --stuck` would find them stuck.
    // Bounded by a gRPC deadline: a file whose own server is already gone must still end.
    const connected = client;
    if (connected)
      await connected.connection
        .withDeadline(Date.now() + 10_000, () => terminateOpenRuns(connected, queues))
        .catch(() => undefined);
    await fleet.killAll();
    await client?.connection.close();
    await llm?.close();
    await refunds?.cleanup();
  });

  return fixture;
}

async function terminateOpenRuns(client: Client, queues: readonly TemporalEnv[]): Promise<void> {
  for (const queue of queues) {
    const open = client.workflow.list({
      query: `TaskQueue = '${queue.taskQueue}' AND ExecutionStatus = 'Running'`,
    });
    for await (const run of open) {
      await client.workflow
        .getHandle(run.workflowId, run.runId)
        .terminate('test file ended')
        .catch(() => undefined);
    }
  }
}

function assertNever(message: string): never {
  throw new Error(message);
}
