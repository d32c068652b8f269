// Which retail store a process uses: PostgreSQL when AGENT_RETAIL_DATABASE_URL is set (one store
// for every worker, on any host), else the SQLite file AGENT_RETAIL_DB (the embedded default:
// shared only by processes on one host that see the same file). Also the end state of a
// conversation, read by the eval, the tests and operators.
import type { RetailDB } from '../db';
import { readEnv } from '../../../runtime/env-vars';
import type { RetailStoreBackend } from './store-backend';
import { PostgresRetailStore } from './postgres';
import { RetailStore } from './store';

/** Where the conversations' databases live: a PostgreSQL URL, or a SQLite file. */
export type RetailTarget = { url: string } | { file: string };

export function retailTargetFromEnv(env: NodeJS.ProcessEnv = process.env): RetailTarget {
  const url = readEnv('AGENT_RETAIL_DATABASE_URL', env);
  return url ? { url } : { file: readEnv('AGENT_RETAIL_DB', env) };
}

export function openRetailStore(target: RetailTarget): RetailStoreBackend {
  return 'url' in target ? PostgresRetailStore.open(target.url) : RetailStore.open(target.file);
}

/**
 * The store, opened on first use (a worker that never serves retail never opens it). The target is
 * read now: a bad URL stops the worker at its start, in one line, not at the first write.
 */
export function lazyRetailStore(target: RetailTarget = retailTargetFromEnv()): () => RetailStoreBackend {
  let store: RetailStoreBackend | undefined;
  return () => (store ??= openRetailStore(target));
}

/** A SQLite file's path, or a target. */
function targetOf(where: string | RetailTarget): RetailTarget {
  return typeof where === 'string' ? { file: where } : where;
}

/** Opens the store `where` names, runs `work`, closes it. */
export async function withRetailStore<T>(
  where: string | RetailTarget,
  work: (s: RetailStoreBackend) => Promise<T>,
): Promise<T> {
  const store = openRetailStore(targetOf(where));
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * A conversation's database now (the eval's end state); the initial database when it never wrote.
 * `run` is the conversation's state key (`<workflow id>/<first run id>`), or a workflow id: its
 * latest conversation.
 */
export function readRetailDb(where: string | RetailTarget, run: string): Promise<RetailDB> {
  return withRetailStore(where, async (s) => s.database(await s.conversationOf(run)));
}

/** Writes the conversation committed (applied or refused, each key once); `run` as in readRetailDb. */
export function countAppliedWrites(where: string | RetailTarget, run: string): Promise<number> {
  return withRetailStore(
    where,
    async (s) => (await s.writesOf(await s.conversationOf(run))).filter((w) => w.state !== 'not_made').length,
  );
}
