// Which test files need a browser, and where the browser is: `npm test` (scripts/test.ts) runs
// them only where Debian's Chromium is installed, unless AGENT_REQUIRE_BROWSER=1 (CI) makes a
// missing browser a failure. The browser tests launch the same path (test/helpers/browser.ts).
import fs from 'node:fs';
import path from 'node:path';

/** CHROMIUM_PATH, else Debian's package's binary. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CHROMIUM_PATH || '/usr/bin/chromium';
}

/** Browser tests are named `*.browser.e2e.test.ts` (compiled: `.js`). */
export function isBrowserTest(file: string): boolean {
  return /\.browser\.e2e\.test\.[jt]s$/.test(path.basename(file));
}

export type BrowserSelection =
  { run: true } | { run: false; skipped: string[]; message: string } | { run: false; failure: string };

/** What to do with the browser tests among `files`, given this machine's Chromium and the env. */
export function browserSelection(files: string[], env: NodeJS.ProcessEnv = process.env): BrowserSelection {
  const browserFiles = files.filter(isBrowserTest);
  const chromium = chromiumPath(env);
  if (browserFiles.length === 0 || isExecutable(chromium)) return { run: true };
  const names = browserFiles.map((f) => path.basename(f)).join(', ');
  const install = 'apt-get install chromium (or set CHROMIUM_PATH)';
  if (env.AGENT_REQUIRE_BROWSER === '1') {
    return {
      run: false,
      failure: `AGENT_REQUIRE_BROWSER=1 but ${chromium} is missing: ${install}; needed by ${names}`,
    };
  }
  return {
    run: false,
    skipped: browserFiles,
    message: `skipped ${browserFiles.length} browser test file(s) (${names}): no ${chromium}; ${install}`,
  };
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
