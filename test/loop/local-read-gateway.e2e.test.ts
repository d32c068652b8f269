// Adversary: the gateway runs before a local read (docs/runtime-semantics.md, "Read-only tools as
// local activities"): a read outside the allowlist, with arguments its schema refuses, for another
// principal, or repeated with nothing new in between is refused (or answered from the earlier
// result) in the workflow, and no local activity runs for it: the history holds one marker, the
// one allowed read's.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { final, tool } from '../../offline-model/scripted-replies';
import { LOCAL_ACTIVITY_MARKER } from '../../common/temporal/local-call';
import { agentFixture } from '../helpers/agent-fixture';
import { temporalCli } from '../helpers/temporal-cli-run';

interface ShownEvent {
  markerRecordedEventAttributes?: { markerName?: string };
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
}

const fixture = agentFixture({ queue: 'adv-local-gateway' });

async function toolEvents(id: string): Promise<{ markers: number; activities: number }> {
  const shown = await temporalCli(fixture.env, ['workflow', 'show', '--workflow-id', id, '-o', 'json']);
  assert.equal(shown.code, 0, shown.stderr);
  const events = (JSON.parse(shown.stdout) as { events: ShownEvent[] }).events;
  return {
    markers: events.filter((e) => e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER).length,
    activities: events.filter(
      (e) =>
        e.activityTaskScheduledEventAttributes &&
        e.activityTaskScheduledEventAttributes.activityType?.name !== 'decide',
    ).length,
  };
}

describe('the gateway before a local read', () => {
  const refused: Array<[string, ReturnType<typeof tool>]> = [
    ['another principal', tool('get_user_profile', { user_id: 43 })],
    ['arguments the schema refuses', tool('get_user_profile', { user_id: 'x"; DROP' })],
    ['outside the allowlist', tool('get_user_billing', { user_id: 42 })],
    ['an unknown tool', tool('__proto__', { user_id: 42 })],
  ];
  for (const [what, call] of refused)
    it(`refuses a read for ${what} before any local activity runs`, async () => {
      const run = await fixture.run([call, final('done'), final('done')], { allow: ['get_user_profile'] });
      assert.equal(run.result.history.filter((h) => h.observation.ok).length, 0, JSON.stringify(run.result));
      assert.deepEqual(await toolEvents(run.id), { markers: 0, activities: 0 }, JSON.stringify(run.result));
    });

  it('answers a repeated read from the earlier result: one local activity', async () => {
    const run = await fixture.run(
      [tool('get_user_profile', { user_id: 42 }), tool('get_user_profile', { user_id: 42 }), final('done')],
      { allow: ['get_user_profile'] },
    );
    assert.equal(run.result.stop_reason, 'success', JSON.stringify(run.result));
    assert.equal(run.result.history[1]?.observation.repeat?.of_step, 1, JSON.stringify(run.result.history));
    assert.deepEqual(await toolEvents(run.id), { markers: 1, activities: 0 });
  });
});
