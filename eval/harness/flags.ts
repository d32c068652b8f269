// The command-line flags every suite reads the same way: the chaos seed, the worker fleet, the
// Temporal server, the report folder and the comparison. A suite adds its own flags to these; a bad
// value is a UsageError (exit code 2), told before anything runs.
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { temporalEnv } from '../../runtime/temporal-env';
import type { TemporalEnv } from '../../runtime/temporal-env';

export class UsageError extends Error {}

/** The flags of every suite (--chaos, --seed, --workers, --concurrency, --server, --out, --compare, --help). */
export const COMMON_FLAGS = {
  suite: { type: 'string' },
  chaos: { type: 'boolean' },
  seed: { type: 'string' },
  workers: { type: 'string' },
  concurrency: { type: 'string' },
  server: { type: 'string' },
  out: { type: 'string' },
  compare: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** parseArgs over the common flags and the suite's own; an unknown or malformed flag is a UsageError. */
export function parseFlags<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], own: O) {
  try {
    return parseArgs({ args: argv, options: { ...COMMON_FLAGS, ...own } }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer, got "${raw}"`);
  return n;
}

/** "a, b,,c" → ['a', 'b', 'c']. */
export function commaList(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export interface CommonFlags {
  seed: number;
  workers: number;
  concurrency: number;
  /** --server: the connection settings as the CLI reads them (namespace, Web UI address), at that address. */
  server: TemporalEnv | undefined;
  out: string;
  /** --compare: the previous report.json to compare with. */
  compare: string | undefined;
}

type CommonValues = { [K in 'seed' | 'workers' | 'concurrency' | 'server' | 'out' | 'compare']?: string | undefined };

export function commonFlags(values: CommonValues, repoRoot: string, defaultConcurrency: number): CommonFlags {
  return {
    seed: positiveInt('seed', values.seed, 1),
    workers: positiveInt('workers', values.workers, 2),
    concurrency: positiveInt('concurrency', values.concurrency, defaultConcurrency),
    server: values.server ? temporalEnv(process.env, { address: values.server }) : undefined,
    out: path.resolve(values.out ?? path.join(repoRoot, 'eval-results')),
    compare: values.compare,
  };
}
