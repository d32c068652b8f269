// Headless Chromium for the browser tests (*.browser.e2e.test.ts): Debian's package, driven by
// playwright-core. `npm test` runs these files only where the browser is (local-servers/browser-tests.ts).
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { chromiumPath } from '../../local-servers/browser-tests';
import { REPO_ROOT } from './harness';

/** Screenshots of the browser tests land here. */
export const ARTIFACTS = path.join(REPO_ROOT, 'test-artifacts');

export function launchChromium(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: true });
}
