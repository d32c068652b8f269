// `npm test`: one fresh Temporal dev server for the whole run, then `node --test` over dist/test/**/*.test.js.
// Arguments select files: `--e2e` (tests that start processes: `*.e2e.test.ts`), `--unit` (the
// in-process rest), `--browser` (`*.browser.e2e.test.ts`), and substrings of their paths (any one
// matches). Browser tests run only where Chromium is installed; AGENT_REQUIRE_BROWSER=1 (CI) makes a
// missing Chromium a failure instead of one line saying what was skipped (scripts/browser-tests.ts).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { browserSelection, isBrowserTest } from './browser-tests';
import { startDevServer } from './dev-server';
import { repoRoot } from './repo-root';
import { findOrBuildTemporalCli } from './temporal-cli';

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
const KINDS = new Map<string, (file: string) => boolean>([
  ['--e2e', isE2e],
  ['--unit', (file) => !isE2e(file)],
  ['--browser', isBrowserTest],
]);

async function main(): Promise<number> {
  const root = repoRoot();
  const distTest = path.join(root, 'dist', 'test');
  const args = process.argv.slice(2);
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
  const selected = all.filter(
    (f) =>
      (kinds.length === 0 || kinds.some((k) => KINDS.get(k)!(f))) &&
      (filters.length === 0 || filters.some((a) => path.relative(root, f).includes(a))),
  );
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
  const server = await startDevServer({ cliPath });
  console.error(
    `test: Temporal dev server ${server.address} (namespace ${server.namespace}, UI ${server.uiUrl}, healthy in ${Date.now() - t0} ms, log ${server.logFile}); ${files.length} test file(s)`,
  );

  const child = spawn(process.execPath, ['--test', '--test-concurrency=1', ...files], {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
      TEMPORAL_UI_URL: server.uiUrl,
      TEMPORAL_CLI_PATH: cliPath,
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
  await server.stop();
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
