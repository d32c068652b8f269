// A conversation in the Temporal Web UI: headless Chromium (playwright-core) opens a conversation
// run's page and reads its current details, the turns in order (agent, customer, agent) with what
// the run waits for; markdown in a customer's text shows as typed. A run that is not a conversation
// shows no turns. A consent question heads the details, inside the frame's visible part however
// long the turns before it. Screenshots land in test-artifacts/.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromiumPath } from '../../local-servers/browser-tests';
import { byStep, final, message, tool } from '../../offline-model/scripted-replies';
import { runResult, runState } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import { agentFixture } from '../helpers/agent-fixture';
import { launchChromium, screenshot } from '../helpers/browser';
import { eventually } from '../helpers/harness';
import { retailTools } from '../../domains/retail/tools/index';

const UI_TIMEOUT_MS = 30_000;

let browser: Browser;
let uiUrl: string;

const fixture = agentFixture({
  queue: 'conversation-ui',
  // The consent test's retail writes go to a database of the file's own.
  workerEnv: { AGENT_RETAIL_DB: path.join(mkdtempSync(path.join(os.tmpdir(), 'conversation-ui-')), 'retail.sqlite') },
  prepare: () => {
    uiUrl = (process.env.TEMPORAL_UI_URL ?? '').replace(/\/+$/, '');
    assert.ok(uiUrl, 'TEMPORAL_UI_URL is set by `npm test`');
    const chromium = chromiumPath();
    assert.ok(existsSync(chromium), `${chromium} is missing: apt-get install -y chromium (.ci/run does it)`);
  },
  setup: async () => {
    browser = await launchChromium();
  },
});

after(async () => {
  await browser?.close();
});

const GREETING = 'Hello! How can I help you today?';
// Markdown and HTML in a customer's words must show as typed, not render.
const QUESTION = 'Which plan am I on: *pro* or _basic_? <b>thanks</b>';
const FOUND = 'I found your profile: you are on the pro plan.';

/** The text of the run page's frame that shows `needle` (the current details render in a frame of their own). */
async function detailsText(page: Page, needle: string): Promise<string> {
  return eventually(
    `"${needle}" on the run's page`,
    async () => {
      for (const frame of page.frames()) {
        const text = await frame
          .locator('body')
          .innerText({ timeout: 1000 })
          .catch(() => '');
        // The UI's markdown renderer sets typographic quotes and slashes: compare plain ones.
        const plain = text.replace(/[‘’]/g, "'").replace(/[“”]/g, '"').replace(/⁄/g, '/');
        if (plain.includes(needle)) return plain;
      }
      return undefined;
    },
    UI_TIMEOUT_MS,
  );
}

/** Opens the run's User Metadata tab (the current details come live from a worker, by a query). */
async function openRun(page: Page, id: string): Promise<void> {
  await page.goto(
    `${uiUrl}/namespaces/${encodeURIComponent(fixture.env.namespace)}/workflows/${encodeURIComponent(id)}`,
  );
  await page.waitForURL(/\/history/, { timeout: UI_TIMEOUT_MS });
  await page.getByText('User Metadata', { exact: true }).click();
  await page.waitForURL(/\/user-metadata/, { timeout: UI_TIMEOUT_MS });
}

function inOrder(text: string, parts: string[]): void {
  const at = parts.map((part) => text.indexOf(part));
  for (const [i, index] of at.entries()) assert.ok(index >= 0, `the details show "${parts[i]}":\n${text}`);
  assert.deepEqual(
    [...at].sort((a, b) => a - b),
    at,
    `the turns are in order:\n${text}`,
  );
}

describe('the Temporal Web UI', () => {
  it("shows a conversation run's turns in order, and what it waits for", async () => {
    const { id, handle } = await fixture.start(
      byStep({
        1: message(GREETING),
        2: tool('get_user_profile', { user_id: 42 }),
        3: message(FOUND),
      }),
      { conversation: {} },
    );
    const waitingAfter = (agentMessages: number) =>
      eventually(`the run to wait for the customer after ${agentMessages} message(s)`, async () => {
        const state = await runState(handle);
        return state.phase === 'awaiting_customer' && state.conversation?.agent_messages === agentMessages
          ? state
          : undefined;
      });
    await waitingAfter(1);
    await sayToRun(fixture.client, id, { text: QUESTION });
    await waitingAfter(2);

    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    try {
      await openRun(page, id);
      const live = await detailsText(page, FOUND);
      inOrder(live, [
        'conversation · 3 turn(s): 2 from the agent, 1 from the customer',
        `agent: ${GREETING}`,
        `customer: ${QUESTION}`,
        `agent: ${FOUND}`,
      ]);
      // Within the idle timeout of midnight UTC, the time carries its date.
      assert.match(live, /awaiting the customer's reply until (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC/);
      assert.ok(live.includes(`agent say ${id} TEXT`), live);
      await screenshot(page, 'conversation-ui-1-waiting.png');

      await sayToRun(fixture.client, id, { text: 'That is all, bye.', end: true });
      assert.equal((await runResult(handle)).stop_reason, 'customer_ended');
      await openRun(page, id);
      const ended = await detailsText(page, 'ended: customer_ended');
      inOrder(ended, [
        'ended: customer_ended after 3 step(s)',
        'conversation · 4 turn(s): 2 from the agent, 2 from the customer · the customer ended the conversation',
        `agent: ${GREETING}`,
        `customer: ${QUESTION}`,
        `agent: ${FOUND}`,
        'customer: That is all, bye. (ended the conversation)',
      ]);
      await screenshot(page, 'conversation-ui-2-ended.png');
    } catch (err) {
      await screenshot(page, 'conversation-ui-failure.png').catch(() => undefined);
      throw err;
    } finally {
      await page.close();
    }
  });

  it('shows no turns for a run that is not a conversation', async () => {
    const { id, result } = await fixture.run([tool('get_user_profile', { user_id: 42 }), final('Refund: yes.')]);
    assert.equal(result.stop_reason, 'success');
    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    try {
      await openRun(page, id);
      const details = await detailsText(page, 'ended: success after 2 step(s)');
      for (const turn of ['conversation ·', 'agent:', 'customer:'])
        assert.ok(!details.includes(turn), `no "${turn}" in:\n${details}`);
      await screenshot(page, 'conversation-ui-3-not-a-conversation.png');
    } finally {
      await page.close();
    }
  });

  it('a consent question heads the current details, visible without scrolling after long turns', async () => {
    // From τ²-bench's retail database: a customer with a pending order.
    const email = 'ivan.santos3158@example.com';
    const cancel = { order_id: '#W8770097', reason: 'no longer needed' };
    const long = (who: string) => `${who}: ${'a long message that fills the line and the next one. '.repeat(5)}`;
    const { id, handle } = await fixture.start(
      byStep({
        1: message(long('greeting')),
        2: tool('find_user_id_by_email', { email }),
        3: message(long('found you')),
        4: tool('cancel_pending_order', cancel),
        5: final('All right, I left the order as it is.'),
      }),
      {
        goal: 'Serve the retail customer.',
        domain: 'retail',
        principal: undefined,
        allow: retailTools.map((t) => t.name),
        conversation: {},
        budget: { max_steps: 8, max_tool_calls: 6, max_seconds: 120 },
      },
    );
    const waitingAfter = (agentMessages: number, consent = false) =>
      eventually(`the run to wait for the customer after ${agentMessages} message(s)`, async () => {
        const state = await runState(handle);
        const c = state.conversation;
        return state.phase === 'awaiting_customer' &&
          c?.agent_messages === agentMessages &&
          Boolean(c.last_message?.consent) === consent
          ? state
          : undefined;
      });
    await waitingAfter(1);
    await sayToRun(fixture.client, id, { text: `${long('me')} My email is ${email}.` });
    await waitingAfter(2);
    await sayToRun(fixture.client, id, { text: `${long('me again')} Please cancel ${cancel.order_id}.` });
    await waitingAfter(3, true);

    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    try {
      await openRun(page, id);
      const action = `cancel_pending_order {"order_id":"${cancel.order_id}","reason":"${cancel.reason}"}`;
      const first = `awaiting the customer's consent: ${action} — reply with: agent say ${id} yes`;
      const details = await detailsText(page, first);
      assert.ok(details.trimStart().startsWith(first), `the question comes first:\n${details}`);
      // The question's paragraph lies within the frame that shows it: the UI gives the current details
      // a fixed height and clips what is below.
      const placed = await eventually('the consent paragraph laid out', async () => {
        for (const f of page.frames()) {
          const paragraph = f.locator('p', { hasText: /awaiting the customer.s consent:/ });
          if (f === page.mainFrame() || (await paragraph.count().catch(() => 0)) !== 1) continue;
          const [text, shownIn] = await Promise.all([paragraph.boundingBox(), (await f.frameElement()).boundingBox()]);
          return text && shownIn ? { text, shownIn } : undefined;
        }
        return undefined;
      });
      const { text, shownIn } = placed;
      assert.ok(
        text.y >= shownIn.y && text.y + text.height <= shownIn.y + shownIn.height,
        `the question within the details' frame: ${JSON.stringify(placed)}`,
      );
      await screenshot(page, 'conversation-ui-4-consent-first.png');
    } catch (err) {
      await screenshot(page, 'conversation-ui-consent-failure.png').catch(() => undefined);
      throw err;
    } finally {
      await page.close();
    }
    await sayToRun(fixture.client, id, { text: 'no' });
    assert.equal((await runResult(handle)).stop_reason, 'success');
  });
});
