// The Temporal Web UI reads like the trace: headless Chromium (Debian's `chromium`, driven by
// playwright-core) opens the dev server's UI, finds a finished run by its search attributes and
// its static summary (user and goal), opens its history and sees the `decide` and tool activities
// with their step summaries, the run's search attributes and its current details. The run's
// history holds one search-attribute upsert per step at most, and the query and the Update carry
// descriptions. A run awaiting approval: its goal in the run list's AgentGoal column, what awaits
// whom in its current details, and its named approval timer. Screenshots land in test-artifacts/.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromiumPath } from '../../local-servers/browser-tests';
import { final, tool } from '../../offline-model/scripted-replies';
import { runResult, startRun } from '../../client/agent-client';
import { answerApproval, pendingApproval } from '../../client/approvals';
import { goalAttribute } from '../../common/temporal/search-attributes';
import { billingOf, finalAnswer, refundInput, refundOf } from '../helpers/refund-fixtures';
import { runSummary } from '../../client/run-summary';
import type { AgentResult } from '../../common/types';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { ARTIFACTS, launchChromium, screenshot } from '../helpers/browser';
import { APPROVAL_UPDATE_DESCRIPTION, STATE_QUERY_DESCRIPTION } from '../../common/agent-messages';

const UI_TIMEOUT_MS = 30_000;

let browser: Browser;
let uiUrl: string;

const fixture = agentFixture({
  queue: 'web-ui',
  refunds: true,
  workerEnv: { OPENAI_TIMEOUT_SECONDS: '30' },
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

/** The text of the page's frame that shows `needle` (markdown renders in frames of its own), typographic quotes made plain. */
async function frameText(page: Page, needle: string): Promise<string> {
  return eventually(
    `"${needle}" on the page`,
    async () => {
      for (const frame of page.frames()) {
        const text = await frame
          .locator('body')
          .innerText({ timeout: 1000 })
          .catch(() => '');
        const plain = text.replace(/[‘’]/g, "'");
        if (plain.includes(needle)) return plain;
      }
      return undefined;
    },
    UI_TIMEOUT_MS,
  );
}

describe('the Temporal Web UI', () => {
  it('finds a finished run by its search attributes and shows decide and tool activities with their summaries', async () => {
    // A principal no other run has, so the search finds exactly this run.
    const principal = 700_000 + Math.floor(Math.random() * 200_000);
    const id = uniqueId('ui-run');
    fixture.llm.script(id, [
      tool('get_user_profile', { user_id: principal }),
      tool('search_policy', { query: 'refund window' }),
      final('Refund: yes.'),
    ]);
    const input = agentInput({ principal: String(principal) });
    const handle = await startRun(fixture.client, fixture.env, input, id);
    const result: AgentResult = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    const [profileHash, policyHash] = result.trace.map((t) => t.args_hash);

    // At most one upsert of the Agent* attributes per step, plus the end's, each with only the
    // values that changed (the principal and `running` were set at start). Before batching: 6.
    const upserts = ((await handle.fetchHistory()).events ?? []).flatMap((e) => {
      const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
      const names = Object.keys(fields ?? {}).filter((name) => name.startsWith('Agent'));
      return names.length > 0 ? [names.sort()] : [];
    });
    assert.deepEqual(upserts, [
      ['AgentStep'],
      ['AgentStep', 'AgentToolCalls'],
      ['AgentStep', 'AgentToolCalls'],
      ['AgentStatus', 'AgentStopReason'],
    ]);

    // The handlers' descriptions, as the UI and `temporal workflow metadata` read them.
    type Definitions = Array<{ name: string; description?: string }>;
    const metadata = (await handle.query('__temporal_workflow_metadata')) as {
      definition: { queryDefinitions: Definitions; updateDefinitions: Definitions };
    };
    const described = (list: Definitions, name: string) => list.find((d) => d.name === name)?.description;
    assert.equal(described(metadata.definition.queryDefinitions, 'state'), STATE_QUERY_DESCRIPTION);
    assert.equal(described(metadata.definition.updateDefinitions, 'approval'), APPROVAL_UPDATE_DESCRIPTION);
    const { staticSummary } = runSummary(input);
    assert.equal(await (await handle.describe()).staticSummary(), staticSummary);
    assert.match(staticSummary, new RegExp(`^user ${principal}: `));

    const query = `AgentPrincipal = "${principal}" AND AgentStatus = "ok" AND AgentStopReason = "success"`;
    await eventually('the run in the visibility store', async () => {
      for await (const info of fixture.client.workflow.list({ query })) if (info.workflowId === id) return true;
      return undefined;
    });

    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    try {
      // The run list, filtered by the agent's search attributes, as an operator would type it.
      await page.goto(
        `${uiUrl}/namespaces/${encodeURIComponent(fixture.env.namespace)}/workflows?query=${encodeURIComponent(query)}`,
      );
      const link = page.getByRole('link', { name: id, exact: true });
      await link.waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByText('AgentPrincipal', { exact: false }).first().waitFor({ timeout: UI_TIMEOUT_MS });
      await screenshot(page, 'web-ui-1-search.png');

      // Its history: every activity says which step and which tool it was.
      await link.click();
      await page.waitForURL(/\/history/, { timeout: UI_TIMEOUT_MS });
      // The static summary (who, what) heads the run's page.
      await page.getByText(staticSummary, { exact: false }).first().waitFor({ timeout: UI_TIMEOUT_MS });
      // Each summary goes on with the step event's fields (decision, policy, what is left): prefixes here.
      // The profile read is a local activity (read-only): the UI shows its marker with the same summary.
      for (const text of [
        'decide • step 1: decide · left:',
        `step 1: get_user_profile (${profileHash}) · tool_call, policy allowed · left:`,
        'decide • step 2: decide · left:',
        `search_policy • step 2: search_policy (${policyHash}) · tool_call, policy allowed · left:`,
        'decide • step 3: decide · left:',
      ]) {
        await page.getByText(text, { exact: false }).first().waitFor({ timeout: UI_TIMEOUT_MS });
      }
      await screenshot(page, 'web-ui-2-history.png');

      // The summaries, one per activity, in the UI's metadata view; and the current details.
      await page.getByText('User Metadata', { exact: true }).click();
      await page.waitForURL(/\/user-metadata/, { timeout: UI_TIMEOUT_MS });
      for (const text of [
        'step 1: decide · left:',
        `step 1: get_user_profile (${profileHash}) · tool_call, policy allowed · left:`,
        'step 2: decide · left:',
        `step 2: search_policy (${policyHash}) · tool_call, policy allowed · left:`,
        'step 3: decide · left:',
      ]) {
        await page.getByText(text, { exact: false }).first().waitFor({ timeout: UI_TIMEOUT_MS });
      }
      // Summary, details and current details are markdown, each rendered in a frame of its own;
      // current details come live from the worker (a query).
      for (const text of [`Agent run for user ${principal}`, 'ended: success after 3 step(s)']) {
        await eventually(
          `"${text}" on the metadata page`,
          async () => {
            for (const frame of page.frames()) if ((await frame.getByText(text).count()) > 0) return true;
            return undefined;
          },
          UI_TIMEOUT_MS,
        );
      }
      await screenshot(page, 'web-ui-3-metadata.png');

      // And the search attributes the workflow kept up to date.
      await page.getByText('Search Attributes', { exact: true }).click();
      await page.waitForURL(/\/search-attributes/, { timeout: UI_TIMEOUT_MS });
      await page.getByText('"AgentStopReason"').first().waitFor({ timeout: UI_TIMEOUT_MS });
      const body = await page.locator('body').innerText();
      for (const fragment of [
        `"AgentPrincipal": "${principal}"`,
        '"AgentStatus": "ok"',
        '"AgentStep": 3',
        '"AgentStopReason": "success"',
        '"AgentToolCalls": 2',
      ]) {
        assert.ok(body.includes(fragment), `search attributes show ${fragment}`);
      }
      await screenshot(page, 'web-ui-4-search-attributes.png');
    } catch (err) {
      await screenshot(page, 'web-ui-failure.png').catch(() => undefined);
      throw err;
    } finally {
      await page.close();
    }
    assert.ok(existsSync(path.join(ARTIFACTS, 'web-ui-2-history.png')));
  });

  it('a run awaiting approval: its goal in the list, what awaits whom in its details, its named approval timer', async () => {
    const user = fixture.refunds.nextUser();
    const id = uniqueId('ui-approval');
    fixture.llm.script(id, [billingOf(user), refundOf(user, 49), finalAnswer()]);
    const input = agentInput(refundInput(user));
    const handle = await startRun(fixture.client, fixture.env, input, id);
    const pending = await eventually('the refund awaiting approval', () => pendingApproval(handle));
    assert.equal(pending.tool, 'issue_refund');
    const goal = goalAttribute(input.goal);
    await eventually('the run in the visibility store by its goal', async () => {
      for await (const info of fixture.client.workflow.list({ query: `AgentGoal = "${goal}"` }))
        if (info.workflowId === id) return true;
      return undefined;
    });

    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    // The run list's columns, as an operator sets them once with "Configure Columns" (kept in the browser).
    const columns = ['Status', 'Workflow ID', 'AgentGoal', 'Type', 'Start', 'End'].map((label) => ({ label }));
    const stored = JSON.stringify({ [fixture.env.namespace]: columns });
    await context.addInitScript({
      content: `localStorage.setItem('namespace-workflow-table-columns', ${JSON.stringify(stored)});`,
    });
    const page = await context.newPage();
    try {
      await page.goto(
        `${uiUrl}/namespaces/${encodeURIComponent(fixture.env.namespace)}/workflows?query=${encodeURIComponent(`WorkflowId = "${id}"`)}`,
      );
      await page.getByRole('link', { name: id, exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByText(goal, { exact: true }).first().waitFor({ timeout: UI_TIMEOUT_MS });
      await screenshot(page, 'web-ui-5-list-goal.png');

      // The run's page opens on its history, whose timeline names the approval's timer with what awaits
      // whom and the command that answers (not "2 (1h)").
      await page.getByRole('link', { name: id, exact: true }).click();
      await page.waitForURL(/\/history/, { timeout: UI_TIMEOUT_MS });
      const timer = `approval timeout · step 2: issue_refund USD 49.00 for user ${user} awaits approval — agent approve ${id}`;
      await page.getByText(timer, { exact: false }).first().waitFor({ timeout: UI_TIMEOUT_MS });
      await screenshot(page, 'web-ui-6-approval-timer.png');

      // The current details (the User Metadata tab) say it in words: "step 2 of 8", never "2/8".
      await page.getByText('User Metadata', { exact: true }).click();
      await page.waitForURL(/\/user-metadata/, { timeout: UI_TIMEOUT_MS });
      const details = `step 2 of 8: awaiting approval: issue_refund USD 49.00 for user ${user} — agent approve ${id} | agent reject ${id}`;
      const shown = await frameText(page, details);
      assert.doesNotMatch(shown, /\d⁄\d|\d\/\d/, 'no step fraction');
      await screenshot(page, 'web-ui-7-awaiting-approval.png');
    } catch (err) {
      await screenshot(page, 'web-ui-approval-failure.png').catch(() => undefined);
      throw err;
    } finally {
      await context.close();
    }
    await answerApproval(fixture.client, id, { decision: 'approve' });
    assert.equal((await runResult(handle)).stop_reason, 'success');
  });
});
