// `npm test`: one fresh Temporal dev server for the whole run, then `node --test` over dist/test/**/*.test.js.
// Arguments select files: `--e2e` (tests that start processes: `*.e2e.test.ts`), `--unit` (the
// in-process rest), `--browser` (`*.browser.e2e.test.ts`), and substrings of their paths (any one
// matches). Browser tests run only where Chromium is installed; AGENT_REQUIRE_BROWSER=1 (CI) makes a
// missing Chromium a failure instead of one line saying what was skipped (local-servers/browser-tests.ts).
// `--server postgres`: the durability profile on the PostgreSQL-backed multi-service server
// (local-servers/postgres-server.ts) instead of the dev server; `*.postgres.e2e.test.ts` run only there.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { browserSelection, isBrowserTest } from '../local-servers/browser-tests';
import { startDevServer } from '../local-servers/dev-server';
import { repoRoot } from '../local-servers/repo-root';
import { findOrBuildTemporalCli } from '../local-servers/temporal-cli';
import { startPostgresServer } from '../local-servers/postgres-server';
import type { TemporalServerHandle } from '../local-servers/server-handle';

function collectTests(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...collectTests(full));
    else if (entry.isFile() && entry.name.endsWith('.test.js')) out.push(full);
  }
  return out.sort();
}

const isE2e = (file: string): boolean => /\.e2e\.test\.js$/.test(file);
const needsPostgres = (file: string): boolean => /\.postgres\.e2e\.test\.js$/.test(file);

/**
 * What `--server postgres` runs when no file is named: the tests of what the server's storage must
 * keep (crash, server restart, cancel, approvals, exactly-once refunds, operators' replay) and the
 * faults only this server can show (`*.postgres.e2e`).
 */
const POSTGRES_PROFILE = [
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

type ServerKind = 'dev' | 'postgres';

function serverKind(args: string[]): { kind: ServerKind; rest: string[] } | { error: string } {
  const rest: string[] = [];
  let kind: string = 'dev';
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--server') kind = args[++i] ?? '';
    else if (a.startsWith('--server=')) kind = a.slice('--server='.length);
    else rest.push(a);
  }
  if (kind !== 'dev' && kind !== 'postgres')
    return { error: `--server: expected dev or postgres, got ${JSON.stringify(kind)}` };
  return { kind, rest };
}
const KINDS = new Map<string, (file: string) => boolean>([
  ['--e2e', isE2e],
  ['--unit', (file) => !isE2e(file)],
  ['--browser', isBrowserTest],
]);

async function main(): Promise<number> {
  const root = repoRoot();
  const distTest = path.join(root, 'dist', 'test');
  const parsed = serverKind(process.argv.slice(2));
  if ('error' in parsed) {
    console.error(`test: ${parsed.error}`);
    return 1;
  }
  const { kind: server_kind, rest: args } = parsed;
  const kinds = args.filter((a) => KINDS.has(a));
  const filters = args.filter((a) => !KINDS.has(a));

  // dist/ keeps compiled files of deleted sources: only run tests whose test/*.ts still exists.
  const all = collectTests(distTest).filter((f) => {
    const src = path.join(root, path.relative(path.join(root, 'dist'), f)).replace(/\.js$/, '.ts');
    return fs.existsSync(src);
  });
  if (all.length === 0) {
    console.error(
      `test: no *.test.js files under ${distTest} (is test/**/*.test.ts compiled?): refusing to pass with zero tests`,
    );
    return 1;
  }
  const wanted = filters.length === 0 && kinds.length === 0 && server_kind === 'postgres' ? POSTGRES_PROFILE : filters;
  const selected = all.filter(
    (f) =>
      (kinds.length === 0 || kinds.some((k) => KINDS.get(k)!(f))) &&
      (wanted.length === 0 || wanted.some((a) => path.relative(root, f).includes(a))) &&
      (server_kind === 'postgres' || !needsPostgres(f)),
  );
  const postgresOnly = all.filter(needsPostgres).filter((f) => !selected.includes(f));
  if (server_kind === 'dev' && postgresOnly.length > 0 && filters.length === 0) {
    console.error(
      `test: ${postgresOnly.length} test file(s) need the PostgreSQL-backed server and run with \`npm test -- --server postgres\`: ${postgresOnly.map((f) => path.basename(f)).join(', ')}`,
    );
  }
  if (selected.length === 0) {
    console.error(
      `test: no test file matches ${args.map((a) => JSON.stringify(a)).join(', ')} (have: ${all.map((f) => path.relative(distTest, f)).join(', ')})`,
    );
    return 1;
  }
  const browser = browserSelection(selected);
  if ('failure' in browser) {
    console.error(`test: ${browser.failure}`);
    return 1;
  }
  let files = selected;
  if (!browser.run) {
    console.error(`test: ${browser.message}`);
    files = selected.filter((f) => !browser.skipped.includes(f));
    if (files.length === 0) {
      console.error('test: only browser tests were selected, and none can run here');
      return 1;
    }
  }

  const cliPath = await findOrBuildTemporalCli();
  const t0 = Date.now();
  const server: TemporalServerHandle & { stopAll?: () => Promise<void>; ledgerUrl?: string } =
    server_kind === 'postgres'
      ? await startPostgresServer({ log: (line) => console.error(`test: ${line}`) })
      : await startDevServer({ cliPath });
  console.error(
    `test: Temporal ${server_kind === 'postgres' ? 'server on PostgreSQL' : 'dev server'} ${server.address} (namespace ${server.namespace}, UI ${server.uiUrl ?? 'none'}, healthy in ${Date.now() - t0} ms, log ${server.logFile}); ${files.length} test file(s)`,
  );

  const child = spawn(process.execPath, ['--test', '--test-concurrency=1', ...files], {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
      TEMPORAL_UI_URL: server.uiUrl ?? '',
      TEMPORAL_CLI_PATH: cliPath,
      AGENT_TEST_SERVER: server_kind,
      // The PostgreSQL-backed server's Prometheus endpoint (server-tuning.postgres.e2e reads it).
      AGENT_TEST_SERVER_METRICS_URL: 'metricsUrl' in server ? String(server.metricsUrl) : '',
      // The refunds ledger deploy/setup-postgres.sh made in the server's PostgreSQL.
      ...(server.ledgerUrl ? { AGENT_TEST_REFUNDS_DATABASE_URL: server.ledgerUrl } : {}),
    },
  });
  // Ctrl-C reaches the child through the terminal; a plain SIGTERM to us must be passed on.
  const forward = (sig: NodeJS.Signals): void => {
    child.kill(sig);
  };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);

  const code = await new Promise<number>((resolve) => {
    child.once('error', (err) => {
      console.error(`test: could not run node --test: ${err.message}`);
      resolve(1);
    });
    child.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
  });
  await (server.stopAll ?? server.stop)();
  if (code !== 0) {
    process.env.TEMPORAL_KEEP_DEV_DB = '1'; // read by the exit hook that otherwise deletes the temp dir
    console.error(`test: failed (exit ${code}); dev server log kept at ${server.logFile}`);
  }
  return code;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`test: ${err.message}`);
    process.exit(1);
  },
);
