// Adversary: "a run pinned to a kind of store makes its later reads normal activities"
// (docs/runtime-semantics.md, "Read-only tools as local activities"). A retail conversation on a
// real SQLite store: its first read may be local, every read after the one that reported the store
// must be a normal activity (a local one cannot move to a worker on that store). Read in the
// history as an operator reads it (`temporal workflow show -o json`).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runResult } from '../../client/agent-client';
import { final, tool } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { temporalCli } from '../helpers/temporal-cli-run';

const RETAIL_DB = path.join(mkdtempSync(path.join(os.tmpdir(), 'adv-pinned-')), 'retail.sqlite');
interface ShownEvent {
  markerRecordedEventAttributes?: { markerName?: string };
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
}

const fixture = agentFixture({ queue: 'adv-pinned', workerEnv: { AGENT_RETAIL_DB: RETAIL_DB } });
const IVAN = { user_id: 'ivan_santos_6635', email: 'ivan.santos3158@example.com', order: '#W8770097' };

describe('a retail run pinned to its store', () => {
  it('calls its reads after the first as normal activities', async () => {
    const { id, handle } = await fixture.start(
      [
        tool('find_user_id_by_email', { email: IVAN.email }),
        tool('get_user_details', { user_id: IVAN.user_id }),
        tool('get_order_details', { order_id: IVAN.order }),
        final('Your order is pending.'),
      ],
      {
        goal: 'Serve the retail customer.',
        domain: 'retail',
        principal: undefined,
        allow: ['find_user_id_by_email', 'get_user_details', 'get_order_details'],
        budget: { max_steps: 8, max_tool_calls: 6, max_seconds: 120 },
      },
    );
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success', JSON.stringify(result));
    assert.ok(
      result.history.every((h) => h.observation.ok),
      JSON.stringify(result.history),
    );
    const shown = await temporalCli(fixture.env, ['workflow', 'show', '--workflow-id', id, '-o', 'json']);
    assert.equal(shown.code, 0, shown.stderr);
    const events = (JSON.parse(shown.stdout) as { events: ShownEvent[] }).events;
    const scheduled = events
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name as string | undefined)
      .filter((n): n is string => n !== undefined && n !== 'decide');
    const stores = result.history.map((h) => h.observation.store);
    assert.ok(stores.includes('sqlite'), `the calls reported their store: ${JSON.stringify(stores)}`);
    const pinnedFrom = stores.indexOf('sqlite');
    const after = result.history.slice(pinnedFrom + 1).map((h) => (h.action.kind === 'tool' ? h.action.name : ''));
    assert.ok(!scheduled.includes('find_user_id_by_email'), `the first read ran local: ${scheduled}`);
    assert.ok(events.some((e) => e.markerRecordedEventAttributes));
    for (const name of after) assert.ok(scheduled.includes(name), `${name} ran local after the pin: ${scheduled}`);
  });
});
