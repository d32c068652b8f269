// Adversary: docs/domains.md promises that a retail write commits once per idempotency key, across
// worker processes and session loss ("a retry, another worker or a hung attempt that resumes finds
// the key"), and that the conversation's database is the one every worker reads. Four processes
// write the same keys of one conversation at once, retrying as activities do, while every session
// of the store is ended every few milliseconds; each applied write appends one mark to a name.
// Seen: the 'error' comes from a client pool.connect() had just handed out, before it ran any query:
// a session ended right after it connected, in the same read as its ReadyForQuery, reaches the
// client before inTransaction's `await pool.connect()` resumes to attach its listener.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type * as pg from 'pg';
import { PostgresRetailStore } from '../../domains/retail/backend/postgres';
import { DIST, uniqueId } from '../helpers/harness';

const RETAIL_DIR = process.env.TAU2_RETAIL_DIR ?? '/work/shared/tau2-retail';
const USER = 'sofia_rossi_8776';
const KEYS = 25;
const WRITERS = 4;

/** One writer process: every key, each retried until it is decided (as an activity retries). */
const WRITER = `
const { PostgresRetailStore } = require(${JSON.stringify(path.join(DIST, 'domains/retail/backend/postgres.js'))});
const [url, runKey, prefix, keys, user] = process.argv.slice(1);
(async () => {
  const store = PostgresRetailStore.open(url);
  for (let k = 0; k < Number(keys); k++) {
    for (;;) {
      try {
        await store.write(runKey, prefix + ':' + k, 'adv_mark', (db) => {
          db.users[user].name.first_name += '!';
          return { ok: true, result: k };
        });
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  }
  await store.close();
})().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
`;

/** The writer's exit code, and what it printed when it did not end well. */
function writer(url: string, runKey: string, prefix: string): Promise<string> {
  const proc = spawn(process.execPath, ['-e', WRITER, url, runKey, prefix, String(KEYS), USER], {
    env: { ...process.env, TAU2_RETAIL_DIR: RETAIL_DIR },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) =>
    proc.once('exit', (code) =>
      resolve(code === 0 ? 'ok' : `exit ${code}: ${stderr.trim().split('\n').slice(0, 40).join(' | ')}`),
    ),
  );
}

describe('adversary: the retail store on PostgreSQL under racing writers and session loss', () => {
  it('each key applied once, and the database holds exactly the applied writes', async () => {
    const url = process.env.AGENT_TEST_REFUNDS_DATABASE_URL;
    assert.ok(url, 'run with --server postgres');
    const runKey = `${uniqueId('adv-race')}/run`;
    const prefix = uniqueId('adv-race-key');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Pool } = require('pg') as typeof pg;
    const killer = new Pool({ connectionString: url, max: 1 });
    let racing = true;
    // Bursts of kills, then a quiet moment: a write reads and writes the whole shop database, so
    // under kills every 40 ms alone no transaction may ever finish (a livelock, not a finding).
    const killing = (async () => {
      for (let n = 0; racing; n++) {
        if (n % 40 === 39) await new Promise((r) => setTimeout(r, 1_000));
        await killer
          .query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND usename = current_user AND pid <> pg_backend_pid()`,
          )
          .catch(() => undefined);
        await new Promise((r) => setTimeout(r, 40));
      }
    })();
    const codes = await Promise.all(Array.from({ length: WRITERS }, () => writer(url, runKey, prefix)));
    racing = false;
    await killing;
    await killer.end();
    assert.deepEqual(codes, Array(WRITERS).fill('ok'), 'a writer process died while the store lost its sessions');

    const store = PostgresRetailStore.open(url);
    try {
      const writes = await store.writesOf(runKey);
      assert.equal(writes.filter((w) => w.state === 'applied').length, KEYS);
      const db = await store.database(runKey);
      const marks = db.users[USER]!.name.first_name.length - 'Sofia'.length;
      assert.equal(marks, KEYS, 'the database holds another number of writes than the keys applied');
    } finally {
      await store.close();
    }
  });
});
