// What the Temporal server costs while the bench runs: CPU, memory, eager dispatch, PostgreSQL commits.
import fs from 'node:fs';
import path from 'node:path';
import { procCpuMs, procTreeCpuMs } from './stats';
import { execFileP } from './process';
import { findPostgresBinDir } from '../local-servers/postgres-binaries';
import type { PostgresTemporalServer } from '../local-servers/postgres-server';
import { eagerActivityCount } from '../local-servers/eager-activity-count';
import type { TemporalServerHandle } from '../local-servers/server-handle';

/**
 * CPU of the Temporal server: the dev server is one process; on PostgreSQL it is the server process
 * plus PostgreSQL (the postmaster, its live backends, and the exited ones it has reaped).
 */
export function serverCpuMs(server: TemporalServerHandle): number {
  const own = procCpuMs(server.pid);
  if (server.kind !== 'postgres') return own;
  return own + procTreeCpuMs((server as PostgresTemporalServer).postgres.pid);
}

export function procRssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The server's eager activity counter, or undefined on the dev server (which does not publish it here). */
export async function serverEagerActivities(server: TemporalServerHandle): Promise<number | undefined> {
  return server.kind === 'postgres' ? eagerActivityCount((server as PostgresTemporalServer).metricsUrl) : undefined;
}

/** Committed transactions so far in PostgreSQL (pg_stat_database), or undefined on the dev server. */
export async function pgCommits(server: TemporalServerHandle): Promise<number | undefined> {
  if (server.kind !== 'postgres') return undefined;
  const { port } = (server as PostgresTemporalServer).postgres;
  const psql = path.join(findPostgresBinDir(), 'psql');
  const sql = 'select sum(xact_commit) from pg_stat_database';
  const { stdout } = await execFileP(psql, [
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-U',
    'temporal',
    '-d',
    'temporal',
    '-Atc',
    sql,
  ]);
  return Number(stdout.trim());
}
