// `npm test`: one fresh Temporal dev server for the whole run, then `node --test` over dist/test/**/*.test.js.
// With no argument it runs the in-process tests and the core end-to-end set (scripts/test-selection.ts:
// one file per headline guarantee); `--all` runs every file (.ci/run). Arguments select files from the
// whole suite: `--e2e` (tests that start processes: `*.e2e.test.ts`), `--unit` (the in-process rest),
// `--browser` (`*.browser.e2e.test.ts`), and substrings of their paths (any one matches). Browser tests
// run only where Chromium is installed; AGENT_REQUIRE_BROWSER=1 (CI) makes a missing Chromium a failure
// instead of one line saying what was skipped (local-servers/browser-tests.ts).
// `--server postgres`: the durability profile on the PostgreSQL-backed multi-service server
// (local-servers/postgres-server.ts) instead of the dev server; `*.postgres.e2e` files run only there.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { browserSelection } from '../local-servers/browser-tests';
import { startDevServer } from '../local-servers/dev-server';
import { repoRoot } from '../local-servers/repo-root';
import { findOrBuildTemporalCli } from '../local-servers/temporal-cli';
import { startPostgresServer } from '../local-servers/postgres-server';
import type { TemporalServerHandle } from '../local-servers/server-handle';
import {
  CORE_E2E,
  isDefaultRun,
  needsPostgres,
  parseTestArgs,
  runsAlone,
  selectTests,
  sharedConcurrency,
} from './test-selection';

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

async function main(): Promise<number> {
  const root = repoRoot();
  const distTest = path.join(root, 'dist', 'test');
  const args = parseTestArgs(process.argv.slice(2));
  if ('error' in args) {
    console.error(`test: ${args.error}`);
    return 1;
  }
  const server_kind = args.server;
  const concurrency = sharedConcurrency(server_kind);
  if (typeof concurrency !== 'number') {
    console.error(`test: ${concurrency.error}`);
    return 1;
  }

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
  const relative = all.map((f) => path.relative(root, f));
  const selected = selectTests(relative, args).map((f) => path.join(root, f));
  const postgresOnly = all.filter(needsPostgres).filter((f) => !selected.includes(f));
  if (server_kind === 'dev' && postgresOnly.length > 0 && (args.all || args.filters.length === 0)) {
    console.error(
      `test: ${postgresOnly.length} test file(s) need the PostgreSQL-backed server and run with \`npm test -- --server postgres\`: ${postgresOnly.map((f) => path.basename(f)).join(', ')}`,
    );
  }
  if (server_kind === 'dev' && isDefaultRun(args)) {
    console.error(
      `test: the core set: the in-process tests and ${CORE_E2E.length} end-to-end files, one per guarantee (test/README.md); \`npm test -- --all\` runs all ${all.length - postgresOnly.length} files`,
    );
  }
  if (selected.length === 0) {
    console.error(
      `test: no test file matches ${[...args.kinds, ...args.filters].map((a) => JSON.stringify(a)).join(', ')} (have: ${all.map((f) => path.relative(distTest, f)).join(', ')})`,
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

  // The files of RUNS_ALONE one at a time, then the others `concurrency` at a time, on the same server.
  const alone = files.filter((f) => runsAlone(path.relative(root, f)));
  const shared = files.filter((f) => !alone.includes(f));
  const serverEnv = {
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
  };
  let code = 0;
  for (const [batch, n] of [
    [alone, 1],
    [shared, concurrency],
  ] as const) {
    if (batch.length === 0 || interrupted) continue;
    console.error(`test: ${batch.length} file(s), ${n === 1 ? 'one at a time' : `${n} at a time`}`);
    code = Math.max(code, await nodeTest(root, batch, n, serverEnv));
  }
  await (server.stopAll ?? server.stop)();
  if (code !== 0) {
    process.env.TEMPORAL_KEEP_DEV_DB = '1'; // read by the exit hook that otherwise deletes the temp dir
    console.error(`test: failed (exit ${code}); dev server log kept at ${server.logFile}`);
  }
  return code;
}

let interrupted = false;

/** `node --test` over `files`, `concurrency` files at once; its exit code (1 if it could not start). */
async function nodeTest(root: string, files: string[], concurrency: number, env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...files], {
    cwd: root,
    stdio: 'inherit',
    env,
  });
  // Ctrl-C reaches the child through the terminal; a plain SIGTERM to us must be passed on.
  const forward = (sig: NodeJS.Signals): void => {
    interrupted = true; // and no batch after this one starts
    child.kill(sig);
  };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  try {
    return await new Promise<number>((resolve) => {
      child.once('error', (err) => {
        console.error(`test: could not run node --test: ${err.message}`);
        resolve(1);
      });
      child.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
    });
  } finally {
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`test: ${err.message}`);
    process.exit(1);
  },
);
