// The Temporal Web UI showing encrypted payloads decoded through the codec server, in a real
// browser (chromium via playwright-core). A dev server of its own is started with
// --ui-codec-endpoint; the worker encrypts; the UI first shows ciphertext (no credentials: the
// codec server answers 401 and decodes nothing), then the operator signs in at the codec server
// and turns on "Include cross-origin credentials", and the UI shows the decoded input and result.
// Screenshots land in test-artifacts/.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startDevServer } from '../../local-servers/dev-server';
import type { DevServer } from '../../local-servers/dev-server';
import { freePort } from '../../local-servers/free-port';
import { billing, final } from '../../offline-model/scripted-replies';
import { REFUND_GOAL } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { launchChromium, screenshot } from '../helpers/browser';
import { codecEnv, newKey, newToken, startCodecServerProcess, withoutCodec } from '../helpers/codec';
import type { CodecServerProcess } from '../helpers/codec';

const TOKEN = newToken();
const KEYS = codecEnv({ ui1: newKey() }, 'ui1');

let server: DevServer;
let codec: CodecServerProcess;
let codecUrl: string;
let browser: Browser;
let page: Page;
let workflowUrl: string;
let runId: string;

// A dev server of this file's own (the UI must know the codec endpoint), started before the fixture.
const fixture = agentFixture({
  queue: 'ui-codec',
  server: () => server,
  workerEnv: KEYS,
  clientEnv: { ...withoutCodec(), ...KEYS },
  prepare: async () => {
    // The codec server's port is chosen first: the dev server must be told where the UI finds it.
    const codecPort = await freePort();
    codecUrl = `http://127.0.0.1:${codecPort}`;
    server = await startDevServer({ codecEndpoint: codecUrl });
    codec = await startCodecServerProcess({
      ...KEYS,
      AGENT_CODEC_TOKEN: TOKEN,
      AGENT_CODEC_CORS_ORIGIN: server.uiUrl,
      AGENT_CODEC_PORT: String(codecPort),
    });
  },
  setup: async () => {
    const { id, result } = await fixture.run([billing(), final('Yes: USD 49.00 is refundable.')]);
    assert.equal(result.stop_reason, 'success');
    workflowUrl = `${server.uiUrl}/namespaces/${server.namespace}/workflows/${encodeURIComponent(id)}`;
    runId = id;
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
  },
});

after(async () => {
  await browser?.close();
  await codec?.stop();
  await server?.stop();
});

/** Opens the run and waits for the codec round trip to finish (the UI then stops showing its skeleton). */
async function openRun(): Promise<string> {
  const decodes = page.waitForResponse(
    (r) => r.url().startsWith(`${codecUrl}/decode`) && r.request().method() === 'POST',
    { timeout: 30_000 },
  );
  await page.goto(workflowUrl);
  await page.getByText('reactAgent').first().waitFor({ timeout: 30_000 });
  await decodes;
  await page.getByText('Input', { exact: true }).filter({ visible: true }).first().waitFor();
  // Without credentials the UI keeps retrying the decode of the run's static summary (refused with
  // 401), so the network may never go idle: settle for at most 5 s, then read what it shows.
  await page.waitForLoadState('networkidle', { timeout: 5_000 }).catch(() => undefined);
  return page.locator('body').innerText();
}

describe('the Web UI through the codec server', () => {
  it('without credentials: the codec server refuses (401), the UI shows only ciphertext', async () => {
    const text = await openRun();
    await screenshot(page, 'codec-ui-1-no-credentials.png');
    assert.ok(text.includes(runId));
    assert.ok(!text.includes('pro_monthly'));
    assert.ok(!text.includes('Can I get a refund now'));
    assert.match(text, /Codec Server could not connect/);
    assert.match(codec.output(), /POST \/decode -> 401/);
    assert.doesNotMatch(codec.output(), /POST \/decode -> 200/);
  });

  it('after signing in at the codec server and including credentials, the UI shows decoded payloads', async () => {
    // 1. Sign in: the codec server sets an HttpOnly, SameSite=Strict session cookie for its origin.
    await page.goto(`${codecUrl}/login`);
    await page.locator('input[name="token"]').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Signed in').waitFor();

    // 2. The UI's Codec Server settings: this browser's endpoint, with cross-origin credentials.
    await page.goto(workflowUrl);
    await page.locator('[data-testid="data-encoder-status-error"]').first().click();
    await page.getByTestId('override-accordion').click();
    await page.getByTestId('use-local-endpoint-input').check({ force: true });
    await page.getByTestId('data-encoder-endpoint-input').fill(codecUrl);
    // In this UI version the drawer's lower controls sit under the sticky top bar, where a mouse
    // click cannot reach them; a keyboard user toggles and applies them (as here).
    const credentials = page.getByTestId('data-encoder-include-credentials').locator('input');
    await credentials.focus();
    await page.keyboard.press('Space');
    assert.equal(await credentials.isChecked(), true, '"Include cross-origin credentials" is on');
    await page.getByTestId('confirm-data-encoder-button').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('confirm-data-encoder-button').waitFor({ state: 'hidden' });

    const text = await openRun();
    await screenshot(page, 'codec-ui-2-decoded.png');
    assert.ok(text.includes(REFUND_GOAL.slice(0, 40)), 'the decoded input (the goal) is shown');
    assert.ok(text.includes('pro_monthly'), 'the decoded result (an observation) is shown');
    assert.doesNotMatch(text, /Codec Server could not connect/);
    assert.match(codec.output(), /POST \/decode -> 200 ns=default payloads=[1-9]/);
    assert.ok(!codec.output().includes(TOKEN), 'the codec server never logs the token');
  });
});
