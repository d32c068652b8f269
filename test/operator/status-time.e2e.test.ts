// `agent status` counts only the agent's own time toward max_seconds (issue 29, item 12): during a
// top-up wait the figure stands, and after `agent extend`, while the run goes on, the wait is still
// left out. Against a real worker, with the CLI; the wait outlasts the whole time budget, so a
// figure that counted it would read "0.0 s left".
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { final } from '../../offline-model/scripted-replies';
import { byStep } from '../../offline-model/scripted-replies';
import { runResult, runState } from '../../client/agent-client';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { eventually } from '../helpers/harness';

const fixture = agentFixture({ queue: 'status-time' });
const MAX_SECONDS = 10;

/** The `time:` line of `agent status`: seconds used, the budget, seconds left. */
async function statusTime(id: string): Promise<{ used: number; left: number; text: string }> {
  const shown = await runCli(fixture.env, ['status', id]);
  assert.equal(shown.code, 0, shown.stderr);
  const line = /^time:\s+([\d.]+) s of (\d+) s \(([\d.]+) s left\)$/m.exec(shown.stdout);
  assert.ok(line, shown.stdout);
  assert.equal(Number(line[2]), MAX_SECONDS);
  return { used: Number(line[1]), left: Number(line[3]), text: line[0] };
}

describe('agent status: the time budget leaves waits out', () => {
  it('during a top-up wait longer than the budget, and after the top-up while the run goes on', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const { id, handle } = await fixture.start(
      byStep({
        1: async () => {
          await held;
          return final('Done with the extra step.');
        },
      }),
      { budget: { max_steps: 1, max_seconds: MAX_SECONDS }, topup_wait_seconds: 300 },
    );
    await eventually('the run to wait for a top-up', async () =>
      (await runState(handle)).awaiting_topup ? true : undefined,
    );
    // What is tested is the passing of wall time during the wait: nothing to await but the clock.
    await sleep((MAX_SECONDS + 1) * 1000);
    const during = await statusTime(id);
    assert.ok(during.used < MAX_SECONDS / 2 && during.left > MAX_SECONDS / 2, `during the wait: ${during.text}`);

    const granted = await runCli(fixture.env, ['extend', id, '--steps', '2', '--reason', 'one more look']);
    assert.equal(granted.code, 0, granted.stderr);
    // The run decides its next step (the model holds the answer): its time runs again, the wait stays out.
    await eventually('the next decision to be asked for', () =>
      fixture.llm.requests(id).length >= 1 ? true : undefined,
    );
    const after = await statusTime(id);
    assert.ok(after.used < MAX_SECONDS / 2 && after.left > MAX_SECONDS / 2, `after the top-up: ${after.text}`);
    assert.ok(after.used >= during.used, `${after.text} after ${during.text}`);
    release();

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success', JSON.stringify(result));
    assert.ok(result.usage.elapsed_ms < (MAX_SECONDS / 2) * 1000, `elapsed ${result.usage.elapsed_ms} ms`);
  });
});
