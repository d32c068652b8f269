// The multi-service server on PostgreSQL runs with deploy/'s tuning (`npm test -- --server postgres`).
// Eager activity dispatch needs both sides: the server's dynamic config
// (system.enableActivityEagerExecution, off by default) and a worker that asks for it in each
// ScheduleActivityTask command. When both do, the server hands the activity back in the reply to the
// workflow task and counts it in its activity_eager_execution metric; when either does not, the
// counter stays where it was and every activity takes a round trip through the task queue.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eagerActivityCount } from '../../local-servers/eager-activity-count';
import { final, profile } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';

const fixture = agentFixture({ queue: 'tuning' });

function metricsUrl(): string {
  const url = process.env.AGENT_TEST_SERVER_METRICS_URL;
  assert.ok(url, 'run with `npm test -- --server postgres`: it sets AGENT_TEST_SERVER_METRICS_URL');
  return url;
}

describe('the tuned server (deploy/dynamicconfig/production.yaml)', () => {
  it('hands every activity of a run to the worker eagerly', async () => {
    const before = await eagerActivityCount(metricsUrl());
    const { handle, result } = await fixture.run([profile(), final('Done.')]);
    assert.equal(result.stop_reason, 'success');
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes).length;
    assert.equal(scheduled, 2, 'decide, decide (get_user_profile is a local activity: no activity task)');
    const eager = (await eagerActivityCount(metricsUrl())) - before;
    // At least: an earlier test file's run still ending may add its own.
    assert.ok(eager >= scheduled, `${eager} of the run's ${scheduled} activities were dispatched eagerly`);
  });
});
