// The view handoff (activities/decide/view-handoff.ts): a decide activity gets the view its own run's
// workflow handed over for exactly that activity and view plan, once; anything else (another run,
// another plan, a second attempt, a view held too long) goes by the model_view Query. Bounded.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HELD_MS, MAX_HELD, heldViews, holdView, takeView } from '../../activities/decide/view-handoff';
import type { ViewRef, ViewSource } from '../../common/model-view/model-view';

const ref = (entries: number): ViewRef => ({
  entries,
  turns: 0,
  compact_before: 0,
  compacted: 0,
  budget_tokens: 1_000,
});
const view = (goal: string): ViewSource => ({
  goal,
  domain: 'support',
  principal: null,
  conversation: false,
  history: [],
  turns: [],
  omitted: { history: 0, turns: 0 },
});

describe('view handoff', () => {
  it('gives a view to its own run, activity and plan, once', () => {
    const run = { workflowId: 'wf-a', runId: 'run-1' };
    holdView(run, '1-decide', ref(0), view('mine'), 1_000);
    assert.equal(takeView({ ...run, runId: 'run-2' }, '1-decide', ref(0), 1_000), undefined, 'another run of the id');
    assert.equal(takeView(run, '1-decide', ref(1), 1_000), undefined, 'another plan');
    holdView(run, '1-decide', ref(0), view('mine'), 1_000);
    assert.equal(takeView(run, '1-decide', ref(0), 1_000)?.goal, 'mine');
    assert.equal(takeView(run, '1-decide', ref(0), 1_000), undefined, 'a second attempt asks by the Query');
    holdView(run, '2-decide', ref(0), view('late'), 1_000);
    assert.equal(takeView(run, '2-decide', ref(0), 1_000 + HELD_MS + 1), undefined, 'held too long');
  });

  let round = 1;
  it('never holds more than MAX_HELD views, and a take matches only what was held for that key (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            take: fc.boolean(),
            wf: fc.constantFrom('a', 'b', 'a"]', '["a'),
            run: fc.constantFrom('1', '2'),
            activity: fc.constantFrom('1-decide', '2-decide'),
            entries: fc.nat(2),
          }),
          { maxLength: 60 },
        ),
        (ops) => {
          // Each case later than the last by more than HELD_MS: nothing held before it counts.
          round += 1;
          const now = round * 10 * HELD_MS;
          const mine = new Map<string, { entries: number; goal: string }>();
          const t = now;
          ops.forEach((op, i) => {
            const run = { workflowId: op.wf, runId: op.run };
            const key = JSON.stringify([op.wf, op.run, op.activity]);
            if (!op.take) {
              holdView(run, op.activity, ref(op.entries), view(`v${i}`), t);
              mine.set(key, { entries: op.entries, goal: `v${i}` });
              return;
            }
            const got = takeView(run, op.activity, ref(op.entries), t);
            const held = mine.get(key);
            mine.delete(key);
            assert.equal(got?.goal, held && held.entries === op.entries ? held.goal : undefined);
          });
          assert.ok(heldViews() <= MAX_HELD);
        },
      ),
    );
  });

  it('drops the oldest past MAX_HELD', () => {
    for (let i = 0; i <= MAX_HELD; i++)
      holdView({ workflowId: `w${i}`, runId: 'r' }, '1-decide', ref(0), view(`v${i}`), 9e12);
    assert.equal(heldViews(), MAX_HELD);
    assert.equal(takeView({ workflowId: 'w0', runId: 'r' }, '1-decide', ref(0), 9e12), undefined);
    assert.equal(takeView({ workflowId: `w${MAX_HELD}`, runId: 'r' }, '1-decide', ref(0), 9e12)?.goal, `v${MAX_HELD}`);
  });
});
