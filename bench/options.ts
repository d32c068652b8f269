// The benchmark's flags (`npm run bench -- --help`), parsed by node:util parseArgs.
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';

const REPO = path.resolve(__dirname, '..', '..');

export type CrashMode = 'restart' | 'standby';
const CRASH_MODES: CrashMode[] = ['restart', 'standby'];

export type Phase =
  'overhead' | 'floor' | 'throughput' | 'history' | 'payload' | 'cancel' | 'crash' | 'start' | 'cli' | 'limiter';
/** The default phases; `limiter` (a few minutes of 429s) runs only when asked for. */
export const ALL_PHASES: Phase[] = [
  'overhead',
  'floor',
  'throughput',
  'history',
  'payload',
  'cancel',
  'crash',
  'start',
  'cli',
];
const KNOWN_PHASES: Phase[] = [...ALL_PHASES, 'limiter'];

export interface Options {
  mode: 'quick' | 'full';
  phases: Phase[];
  trials: number;
  warmup: number;
  latencies: number[];
  steps: number;
  concurrency: number[];
  throughputTrials: number;
  throughputLatency: number;
  longSteps: number;
  historyStepsAt: number[];
  continueAsNewEvery: number | undefined;
  cancelTrials: number;
  cliCancelTrials: number;
  crashTrials: number;
  crashLatency: number;
  crashModes: CrashMode[];
  startTrials: number;
  workerOverrides: Record<string, unknown>;
  dynamicConfig: string[];
  sqlitePragmas: string[];
  serverArgs: string[];
  /** postgres: a folder laid out like deploy/ (the configuration to measure); default the repository's. */
  deployDir: string | undefined;
  /** floor: another build's dist/ whose agent worker runs as a third side (the agent before a change). */
  floorBefore: string | undefined;
  /** postgres: extra PostgreSQL settings (`name=value`). */
  postgresSettings: string[];
  label: string | undefined;
  outDir: string;
  codec: string | undefined;
  seed: number;
  timeoutMin: number;
  workerNodeArgs: string[];
  metrics: boolean;
  searchAttributes: boolean;
  /** dev: the Temporal dev server (SQLite); postgres: the multi-service server on PostgreSQL (local-servers/postgres-server.ts). */
  server: 'dev' | 'postgres';
  limiterRuns: number;
  limiterSteps: number;
  limiterTpm: number;
}

export const HELP = `npm run bench -- [flags]
  --quick                  small trial counts, C = 1,10,100 (about 2-3 minutes)
  --server dev|postgres    the Temporal dev server (default), or the multi-service server on PostgreSQL
  --phases a,b             subset of ${KNOWN_PHASES.join(',')} (default: all but limiter)
  --trials N               overhead, floor: paired trials per latency (quick 3, full 15)
  --warmup N               overhead, floor: discarded warm-up pairs (2)
  --latencies a,b,c        overhead, floor: decision latencies in ms (0,50,500)
  --steps N                decisions per scenario run (5: 4 tool calls + final answer)
  --concurrency a,b        throughput: concurrent runs (quick 1,10,100; full 1,10,100,500), after one warm-up run
  --throughput-trials N    throughput: trials per level, fresh worker each (quick 1, full 2)
  --throughput-latency ms  throughput: decision latency (0)
  --long-steps N           history: decisions in the long run (205)
  --history-at a,b         history: steps to report (10,200)
  --continue-as-new-every N  history: the run's continue_as_new_every (default: the workflow's)
  --cancel-trials N        cancel via the client API (quick 5, full 20)
  --cli-cancel-trials N    cancel via \`agent cancel\` (the CLI process), when dist/cli/cli.js exists (quick 2, full 5)
  --crash-trials N         SIGKILL trials per mode (quick 2, full 5)
  --crash-modes a,b        restart (new worker after the kill), standby (a second worker already polls)
  --crash-latency ms       decision latency of the re-run call in the crash phase (50)
  --limiter-runs N          limiter: concurrent runs against the 429-ing provider, with and without the limiter (200)
  --limiter-steps N         limiter: decisions per run (2)
  --limiter-tpm N           limiter: the provider's tokens per minute, and the limiter's (24000; a decision uses 120)
  --start-trials N         start: new \`node dist/worker/main.js\` processes timed to their first poll (5)
  --worker-opt k=v         extra Worker option for every bench worker (value parsed as JSON if it can be)
  --server-dc k=v          extra dev server dynamic config (e.g. system.enableActivityEagerExecution=true)
  --sqlite-pragma k=v      extra dev server SQLite pragma (e.g. journal_mode=wal)
  --server-arg=x           extra raw dev server argument (repeatable; with = when it starts with -)
  --floor-before dir       floor: also bench the agent worker of another build's dist/ (e.g. main's), same run
  --deploy-dir dir         postgres: configuration from dir/temporal, dir/dynamicconfig, dir/postgres (default deploy/)
  --pg-setting k=v         postgres: extra PostgreSQL setting (e.g. synchronous_commit=off; repeatable)
  --codec module           module exporting \`dataConverter\` (payload codec) for client and workers
  --label name             also write bench-<name>.{json,md} (tuning before/after)
  --out dir                output folder (bench-results)
  --seed N                 seed of the random waits in the cancel and crash phases (1)
  --timeout-min N          give up (and kill everything) after N minutes (quick 10, full 60)
  --worker-node-arg=x      node option for the worker processes (e.g. --worker-node-arg=--cpu-prof; repeatable)
  --no-metrics             workers without the Prometheus metrics \`npm run worker\` has by default
  --no-search-attributes   runs that do not upsert the Agent* search attributes (input search_attributes: false)`;

const INTEGER_FLAGS = {
  trials: 'trials',
  warmup: 'warmup',
  steps: 'steps',
  'throughput-trials': 'throughputTrials',
  'throughput-latency': 'throughputLatency',
  'long-steps': 'longSteps',
  'continue-as-new-every': 'continueAsNewEvery',
  'cancel-trials': 'cancelTrials',
  'cli-cancel-trials': 'cliCancelTrials',
  'crash-trials': 'crashTrials',
  'crash-latency': 'crashLatency',
  'limiter-runs': 'limiterRuns',
  'limiter-steps': 'limiterSteps',
  'limiter-tpm': 'limiterTpm',
  'start-trials': 'startTrials',
  seed: 'seed',
  'timeout-min': 'timeoutMin',
} as const satisfies Record<string, keyof Options>;
const LIST_FLAGS = {
  latencies: 'latencies',
  concurrency: 'concurrency',
  'history-at': 'historyStepsAt',
} as const satisfies Record<string, keyof Options>;
const REPEATED_FLAGS = [
  'worker-opt',
  'server-dc',
  'sqlite-pragma',
  'server-arg',
  'worker-node-arg',
  'pg-setting',
] as const;
const STRING_FLAGS = [
  'phases',
  'crash-modes',
  'codec',
  'label',
  'out',
  'server',
  'deploy-dir',
  'floor-before',
] as const;

function numbers(flag: string, value: string): number[] {
  return value
    .split(',')
    .filter(Boolean)
    .map((x) => {
      const n = Number(x);
      if (!Number.isFinite(n) || n < 0) throw new Error(`bench: --${flag}: not a number: ${x}`);
      return n;
    });
}

function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T[] {
  const items = value.split(',').filter(Boolean);
  for (const item of items) if (!allowed.includes(item as T)) throw new Error(`bench: --${flag}: unknown ${item}`);
  return items as T[];
}

/** `--worker-opt key=value`: the value as JSON when it parses (numbers, booleans), else the string (`2s`). */
function workerOption(value: string): [string, unknown] {
  const eq = value.indexOf('=');
  if (eq < 1) throw new Error(`bench: --worker-opt wants key=value, got ${value}`);
  const raw = value.slice(eq + 1);
  try {
    return [value.slice(0, eq), JSON.parse(raw) as unknown];
  } catch {
    return [value.slice(0, eq), raw];
  }
}

export function parseBenchArgs(argv: string[]): Options {
  const options: NonNullable<ParseArgsConfig['options']> = {
    quick: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    'no-metrics': { type: 'boolean' },
    'no-search-attributes': { type: 'boolean' },
  };
  for (const flag of [...Object.keys(INTEGER_FLAGS), ...Object.keys(LIST_FLAGS), ...STRING_FLAGS]) {
    options[flag] = { type: 'string' };
  }
  for (const flag of REPEATED_FLAGS) options[flag] = { type: 'string', multiple: true };
  const values = parseArgs({ args: argv, strict: true, allowPositionals: false, options }).values as Record<
    string,
    string | boolean | string[] | undefined
  >;
  if (values.help) {
    console.log(HELP);
    return process.exit(0);
  }
  const quick = values.quick === true;
  const text = (flag: string): string | undefined => values[flag] as string | undefined;
  const repeated = (flag: (typeof REPEATED_FLAGS)[number]): string[] => (values[flag] as string[] | undefined) ?? [];
  const o: Options = {
    mode: quick ? 'quick' : 'full',
    phases: [...ALL_PHASES],
    trials: quick ? 3 : 15,
    warmup: 2,
    latencies: [0, 50, 500],
    steps: 5,
    concurrency: quick ? [1, 10, 100] : [1, 10, 100, 500],
    throughputTrials: quick ? 1 : 2,
    throughputLatency: 0,
    longSteps: 205,
    historyStepsAt: [10, 200],
    continueAsNewEvery: undefined,
    limiterRuns: 200,
    limiterSteps: 2,
    limiterTpm: 24_000,
    cancelTrials: quick ? 5 : 20,
    cliCancelTrials: quick ? 2 : 5,
    crashTrials: quick ? 2 : 5,
    crashLatency: 50,
    crashModes: [...CRASH_MODES],
    startTrials: 5,
    workerOverrides: Object.fromEntries(repeated('worker-opt').map(workerOption)),
    dynamicConfig: repeated('server-dc'),
    sqlitePragmas: repeated('sqlite-pragma'),
    serverArgs: repeated('server-arg'),
    deployDir: text('deploy-dir') !== undefined ? path.resolve(text('deploy-dir')!) : undefined,
    floorBefore: text('floor-before') !== undefined ? path.resolve(text('floor-before')!) : undefined,
    postgresSettings: repeated('pg-setting'),
    label: text('label')?.replace(/[^A-Za-z0-9._-]/g, '_'),
    outDir: path.resolve(text('out') ?? path.join(REPO, 'bench-results')),
    codec: text('codec') !== undefined ? path.resolve(text('codec')!) : undefined,
    seed: 1,
    timeoutMin: quick ? 10 : 60,
    workerNodeArgs: repeated('worker-node-arg'),
    metrics: values['no-metrics'] !== true,
    searchAttributes: values['no-search-attributes'] !== true,
    server: 'dev',
  };
  for (const [flag, key] of Object.entries(INTEGER_FLAGS)) {
    const value = text(flag);
    if (value !== undefined) o[key] = numbers(flag, value)[0]!;
  }
  for (const [flag, key] of Object.entries(LIST_FLAGS)) {
    const value = text(flag);
    if (value !== undefined) o[key] = numbers(flag, value);
  }
  o.steps = Math.max(2, o.steps);
  const phases = text('phases');
  if (phases !== undefined) o.phases = oneOf('phases', phases, KNOWN_PHASES);
  const server = text('server');
  if (server !== undefined) o.server = oneOf('server', server, ['dev', 'postgres'] as const)[0]!;
  const modes = text('crash-modes');
  if (modes !== undefined) o.crashModes = oneOf('crash-modes', modes, CRASH_MODES);
  return o;
}
