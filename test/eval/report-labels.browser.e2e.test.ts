// The report's figures are readable at its width: headless Chromium opens report.html (a live
// model's τ² report, baseline beside chaos, with the longest labels a report draws: a rate with its
// standard error, a cost partly unknown; and a scripted model's) and finds no label of a figure cut
// off: every piece of text inside a figure lies within the figure and within any box that clips it
// (an inline SVG clips what runs past its width), and no figure scrolls sideways. Then a trial's row
// opens onto its transcript. Screenshots land in test-artifacts/.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { chromiumPath } from '../../local-servers/browser-tests';
import { tau2ReportHtml } from '../../eval/tau2/report-html';
import { launchChromium, screenshot } from '../helpers/browser';
import { sampleTau2Report } from '../helpers/sample-reports';

let browser: Browser;
const dir = mkdtempSync(path.join(tmpdir(), 'report-labels-'));

before(async () => {
  assert.ok(existsSync(chromiumPath()), `${chromiumPath()} is missing: apt-get install -y chromium`);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Run in the page (plain JavaScript: the project compiles without the DOM's types): every text of
 * every figure that is cut off, as "figure: text (why)", and how many texts were checked.
 */
const CLIPPED_LABELS = `(() => {
  const clipped = [];
  let checked = 0;
  const inside = (a, b) =>
    a.left >= b.left - 0.5 && a.right <= b.right + 0.5 && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
  for (const chart of document.querySelectorAll('.chart')) {
    const name = chart.querySelector('h4')?.textContent ?? '?';
    if (chart.scrollWidth > chart.clientWidth) clipped.push(name + ': the figure scrolls sideways');
    const walker = document.createTreeWalker(chart, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent.trim();
      if (!text) continue;
      checked++;
      const range = document.createRange();
      range.selectNodeContents(node);
      const box = range.getBoundingClientRect();
      if (!inside(box, chart.getBoundingClientRect())) clipped.push(name + ': "' + text + '" (outside the figure)');
      // Every box between the text and the figure that clips: an SVG does, so does overflow other than visible.
      for (let el = node.parentElement; el && el !== chart; el = el.parentElement) {
        const clips = el instanceof SVGSVGElement || getComputedStyle(el).overflowX !== 'visible';
        if (clips && !inside(box, el.getBoundingClientRect()))
          clipped.push(name + ': "' + text + '" (cut off by its <' + el.tagName.toLowerCase() + '>)');
        if (clips && el.scrollWidth > el.clientWidth)
          clipped.push(name + ': "' + text + '" (its <' + el.tagName.toLowerCase() + '> scrolls sideways)');
      }
    }
  }
  return { clipped, checked };
})()`;

async function clippedLabels(page: Page): Promise<{ clipped: string[]; checked: number }> {
  return page.evaluate(CLIPPED_LABELS) as Promise<{ clipped: string[]; checked: number }>;
}

describe("report.html's figures", () => {
  for (const [kind, live] of [
    ['live', { OPENAI_MODEL: 'gpt-4.1-mini', OPENAI_API_KEY: 'sk-test-not-used' }],
    ['scripted', undefined],
  ] as const) {
    for (const width of [1280, 760]) {
      it(`no label of a figure is clipped: a ${kind} model's τ² report at ${width} px`, async () => {
        const report = sampleTau2Report(live);
        const file = path.join(dir, `${kind}-${width}.html`);
        writeFileSync(file, tau2ReportHtml(report));
        const page = await browser.newPage({ viewport: { width, height: 900 } });
        try {
          await page.goto(pathToFileURL(file).href);
          const charts = await page.locator('.chart').count();
          assert.ok(charts >= 8, `${charts} figures`);
          const { clipped, checked } = await clippedLabels(page);
          await screenshot(page, `report-labels-${kind}-${width}.png`);
          // Each figure: its name, a label and a value per phase, its meaning.
          assert.ok(checked >= charts * 5, `${checked} texts checked in ${charts} figures`);
          assert.deepEqual(clipped, []);
          // The widest labels are there to be checked.
          const dbMatch = await page.locator('.chart', { hasText: 'db_match' }).first().innerText();
          assert.match(dbMatch, /61\/69 \(88\.4% ± 3\.9% \(n=69\)\)/);
          const cost = await page.locator('.chart', { hasText: 'cost_usd' }).first().innerText();
          assert.match(
            cost,
            kind === 'live' ? /unknown \(3 trials unpriced; the others \$0\.\d{4}\)/ : /none \(scripted model\)/,
          );
        } finally {
          await page.close();
        }
      });
    }
  }

  it("opens a trial's row onto its whole transcript, the stop reason last", async () => {
    const report = sampleTau2Report(undefined);
    const file = path.join(dir, 'transcript.html');
    writeFileSync(file, tau2ReportHtml(report));
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await page.goto(pathToFileURL(file).href);
      const row = page.locator('#trial-baseline-1-1');
      await row.locator('summary').first().click();
      const transcript = page.locator('#transcript-baseline-1-1');
      await transcript.locator('summary').click();
      const text = await transcript.innerText();
      assert.match(text, /customer\s+Please cancel order #W2378156/);
      assert.match(text, /agent \(consent\)\s+Cancel #W2378156\? cancel_pending_order\(\{"order_id":"#W2378156"\}\)/);
      assert.match(text, /tool call 2\s+cancel_pending_order\(\{"order_id":"#W2378156"\}\) → \{"status":"cancelled"\}/);
      assert.match(text, /run\s+stopped: customer_ended$/);
      await screenshot(page, 'report-transcript.png');
    } finally {
      await page.close();
    }
  });
});
