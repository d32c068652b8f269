// Which test files `npm test` runs. With no argument: every in-process test and the core set below,
// one end-to-end file per headline guarantee of the README, so that the first command a contributor
// runs answers in minutes. `--all` runs the whole suite (what .ci/run runs); `--e2e`, `--unit`,
// `--browser` and path substrings select from the whole suite, as before. `--server postgres` with
// no file named runs the durability profile below.

/** One end-to-end file of the core set and the guarantee it shows (test/README.md has the table). */
export interface CoreFile {
  file: string;
  guarantee: string;
}

export const CORE_E2E: readonly CoreFile[] = [
  {
    file: 'test/loop/agent.e2e.test.ts',
    guarantee: 'every decision and tool call is an activity: the loop, its contract',
  },
  { file: 'test/durability/worker-crash.e2e.test.ts', guarantee: 'a run survives a worker crash' },
  { file: 'test/durability/hung-worker.e2e.test.ts', guarantee: 'a hung worker costs a run one timeout' },
  { file: 'test/durability/server-restart.e2e.test.ts', guarantee: 'a run survives a server restart' },
  { file: 'test/operator/kill-switch.e2e.test.ts', guarantee: 'the kill switch: a cancel ends a run at any moment' },
  { file: 'test/refunds/refund-effects.e2e.test.ts', guarantee: 'effects exactly once' },
  { file: 'test/loop/injection.e2e.test.ts', guarantee: 'nothing a model or a tool says widens what a run may do' },
  { file: 'test/validator/final-validator.e2e.test.ts', guarantee: 'answers are checked against the evidence' },
  { file: 'test/cost/cost.e2e.test.ts', guarantee: 'spend is bounded' },
  { file: 'test/loop/trace.e2e.test.ts', guarantee: 'every step is readable: `agent trace`' },
  { file: 'test/setup/metrics.e2e.test.ts', guarantee: 'every step is readable: Prometheus metrics' },
  { file: 'test/security/encryption.e2e.test.ts', guarantee: 'payloads are encrypted at rest' },
  { file: 'test/conversation/offline-chat.e2e.test.ts', guarantee: "the README's first conversation, offline" },
];

/**
 * What `--server postgres` runs when no file is named: the tests of what the server's storage must
 * keep (crash, server restart, cancel, approvals, exactly-once refunds, operators' replay) and the
 * faults only this server can show (`*.postgres.e2e`).
 */
export const POSTGRES_PROFILE: readonly string[] = [
  'worker-crash.e2e',
  'server-restart.e2e',
  'kill-switch.e2e',
  'cancel-faults.e2e',
  'approval-reset.e2e',
  'refund-approvals-cli.e2e',
  'refund-effects.e2e',
  'temporal-cli-ops.e2e',
  'replay.test',
  '.postgres.e2e',
];

/**
 * Files that run alone, one at a time, before the others run two at a time on the same server (each
 * of those has a task queue of its own, and a namespace of its own where it must count every run):
 * these act on or count every run of the shared namespace, so a neighbour's runs would be cancelled
 * or counted, or they time a fault against a machine nobody else is using.
 */
export const RUNS_ALONE: readonly CoreFile[] = [
  { file: 'test/operator/operator-cli.e2e.test.ts', guarantee: '`cancel --stuck` over the whole namespace' },
  { file: 'test/operator/stuck-kinds.e2e.test.ts', guarantee: '`cancel --stuck` over the whole namespace' },
  { file: 'test/conversation/stuck-race-yes.e2e.test.ts', guarantee: '`cancel --stuck --yes` over the namespace' },
  { file: 'test/conversation/stuck-race-prompt.e2e.test.ts', guarantee: '`cancel --stuck` over the namespace' },
  { file: 'test/operator/cli-fuzz.e2e.test.ts', guarantee: 'fuzzed `cancel` and `list` over the namespace' },
  { file: 'test/operator/inbox.e2e.test.ts', guarantee: 'counts every waiting run of the namespace' },
  { file: 'test/operator/effects-cli.e2e.test.ts', guarantee: "finds its runs among the namespace's last 200" },
  { file: 'test/operator/search-attributes.e2e.test.ts', guarantee: 'counts the runs a visibility query matches' },
  { file: 'test/durability/hung-worker.e2e.test.ts', guarantee: 'times the cost of a hung worker' },
  { file: 'test/durability/fault-matrix.e2e.test.ts', guarantee: 'times each fault against a healthy round' },
  { file: 'test/operator/kill-switch.e2e.test.ts', guarantee: 'times a cancel from the CLI to the closed run' },
];

/** A file of RUNS_ALONE (repository-relative), compiled (`dist/test/...js`) or not. */
export const runsAlone = (file: string): boolean =>
  RUNS_ALONE.some((c) => file.replace(/^dist\//, '').replace(/\.js$/, '.ts') === c.file);

/** How many files run at once beside RUNS_ALONE: AGENT_TEST_CONCURRENCY, else 2 on the dev server, 1 on PostgreSQL. */
export function sharedConcurrency(
  server: ServerKind,
  env: NodeJS.ProcessEnv = process.env,
): number | { error: string } {
  const raw = env.AGENT_TEST_CONCURRENCY;
  if (raw === undefined || raw === '') return server === 'dev' ? 2 : 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 8)
    return { error: `AGENT_TEST_CONCURRENCY: expected 1 to 8, got ${JSON.stringify(raw)}` };
  return n;
}

/** Tests that start processes (`*.e2e.test.ts`, compiled or not). */
export const isE2e = (file: string): boolean => /\.e2e\.test\.[jt]s$/.test(file);
/** Tests that run only on the PostgreSQL-backed server. */
export const needsPostgres = (file: string): boolean => /\.postgres\.e2e\.test\.[jt]s$/.test(file);
/** A core file, compiled (`dist/test/...js`) or not. */
export const isCoreE2e = (file: string): boolean =>
  CORE_E2E.some((c) => file.replace(/^dist\//, '').replace(/\.js$/, '.ts') === c.file);

export type ServerKind = 'dev' | 'postgres';

export interface TestArgs {
  server: ServerKind;
  /** `--all`: the whole suite, not the core set. */
  all: boolean;
  /** `--e2e`, `--unit`, `--browser`. */
  kinds: string[];
  /** Path substrings (any one matches). */
  filters: string[];
}

const KIND_FLAGS = ['--e2e', '--unit', '--browser'];

/** Reads `npm test`'s arguments; an unknown server kind is an error line. */
export function parseTestArgs(argv: readonly string[]): TestArgs | { error: string } {
  const args: TestArgs = { server: 'dev', all: false, kinds: [], filters: [] };
  let kind = 'dev';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--server') kind = argv[++i] ?? '';
    else if (a.startsWith('--server=')) kind = a.slice('--server='.length);
    else if (a === '--all') args.all = true;
    else if (KIND_FLAGS.includes(a)) args.kinds.push(a);
    else args.filters.push(a);
  }
  if (kind !== 'dev' && kind !== 'postgres')
    return { error: `--server: expected dev or postgres, got ${JSON.stringify(kind)}` };
  args.server = kind;
  return args;
}

/** Whether nothing but the server was named: the core set on the dev server, the profile on PostgreSQL. */
export const isDefaultRun = (args: TestArgs): boolean =>
  !args.all && args.kinds.length === 0 && args.filters.length === 0;

const KIND_TESTS: Record<string, (file: string) => boolean> = {
  '--e2e': isE2e,
  '--unit': (file) => !isE2e(file),
  '--browser': (file) => /\.browser\.e2e\.test\.[jt]s$/.test(file),
};

/** The files to run among `files` (repository-relative paths), in their order. */
export function selectTests(files: readonly string[], args: TestArgs): string[] {
  const onServer = files.filter((f) => args.server === 'postgres' || !needsPostgres(f));
  if (isDefaultRun(args)) {
    return args.server === 'postgres'
      ? onServer.filter((f) => POSTGRES_PROFILE.some((p) => f.includes(p)))
      : onServer.filter((f) => !isE2e(f) || isCoreE2e(f));
  }
  return onServer.filter(
    (f) =>
      (args.kinds.length === 0 || args.kinds.some((k) => KIND_TESTS[k]!(f))) &&
      (args.filters.length === 0 || args.filters.some((a) => f.includes(a))),
  );
}
