// What every run of a suite shares: a Temporal server (the suite's own dev server, or one given), the
// scripted model server (unless a live model is used), a fleet of eval workers whose world is a temp
// folder, and a client. All of it ends when the suite does, also on failure and on Ctrl-C.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { createClient } from '../../client/connect';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { startDevServer } from '../../local-servers/dev-server';
import type { DevServer } from '../../local-servers/dev-server';
import { ScriptedLlmServer } from '../../offline-model/scripted-llm-server';
import { WorkerFleet } from './fleet';

export interface SessionOptions {
  /** The suite's short name: it prefixes the task queue, the workflow ids and the temp folder. */
  name: string;
  /** A real model: the workers get OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MODEL (and AGENT_PRICES_FILE) from this env. */
  live?: NodeJS.ProcessEnv;
  workers: number;
  /** A running server instead of one of the suite's own (then chaos cannot restart it). */
  server?: Pick<TemporalEnv, 'address' | 'namespace' | 'uiUrl'>;
  /** The workers' environment beyond the model's and the world folder's (AGENT_EVAL_DIR). */
  workerEnv?: (worldDir: string) => Record<string, string>;
  /**
   * Work of the suite's own (planning) done while the worker processes boot: they load their code for
   * seconds, and this process would otherwise only wait for them.
   */
  whileWorkersStart?: () => void;
  log: (line: string) => void;
}

export interface Session {
  /** Unique to this suite run: workflow ids are `<name>-<tag>-…`. */
  tag: string;
  env: TemporalEnv;
  client: Client;
  fleet: WorkerFleet;
  /** The scripted model server; undefined with a live model. */
  llm?: ScriptedLlmServer;
  /** The eval world's folder (AGENT_EVAL_DIR): each run's data files. */
  worldDir: string;
  /** Restarts the Temporal server; undefined when the suite does not own it (--server). */
  restartServer?: () => Promise<void>;
  /** Whether the server outlives the suite (--server), so Web UI links to it keep working. */
  serverKept: boolean;
}

const MODEL_VARS = ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL', 'AGENT_PRICES_FILE'];

/** Starts the session, runs `body` in it, and ends it. */
export async function withSession<T>(opts: SessionOptions, body: (session: Session) => Promise<T>): Promise<T> {
  const tag = Date.now().toString(36);
  const worldDir = mkdtempSync(path.join(tmpdir(), `agent-${opts.name}-`));
  const removeWorld = () => rmSync(worldDir, { recursive: true, force: true });
  process.once('exit', removeWorld); // also on Ctrl-C
  let server: DevServer | undefined;
  let llm: ScriptedLlmServer | undefined;
  let fleet: WorkerFleet | undefined;
  let client: Client | undefined;
  try {
    if (!opts.server) {
      opts.log(`starting a Temporal dev server for the ${opts.name} suite ...`);
      server = await startDevServer();
    }
    const where = opts.server ?? server!;
    const env: TemporalEnv = {
      address: where.address,
      namespace: where.namespace,
      uiUrl: where.uiUrl,
      taskQueue: `${opts.name}-${tag}`,
    };
    if (!opts.live) llm = await ScriptedLlmServer.start();
    const modelEnv = opts.live ? pick(opts.live, MODEL_VARS) : { OPENAI_BASE_URL: llm!.baseUrl };
    fleet = new WorkerFleet(env, { ...modelEnv, AGENT_EVAL_DIR: worldDir, ...opts.workerEnv?.(worldDir) });
    opts.log(`starting ${opts.workers} workers ...`);
    const started = fleet.start(opts.workers); // spawned now; ready later
    try {
      opts.whileWorkersStart?.();
    } finally {
      await started;
    }
    client = await createClient(env);
    const own = server;
    return await body({
      tag,
      env,
      client,
      fleet,
      ...(llm ? { llm } : {}),
      worldDir,
      ...(own ? { restartServer: () => own.restart() } : {}),
      serverKept: opts.server !== undefined,
    });
  } finally {
    await client?.connection.close().catch(() => undefined);
    await fleet?.stopAll();
    await llm?.close();
    await server?.stop();
    removeWorld();
  }
}

/** The named variables of `env` that are set. */
export function pick(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  return Object.fromEntries(names.filter((n) => env[n]).map((n) => [n, env[n]!]));
}
