// Adversary: the view handoff (docs/model-protocol.md, "through a sink"). A decision on the worker
// that scheduled it reads its view from memory; a retry on another worker reads it by the Query.
// Promised: what the model sees is the same either way, and a run never gets another run's view.
// Here the same decision's two requests are compared: the first from the worker that scheduled it
// (handoff), the second after that worker was SIGKILLed mid-request, from a fresh worker (Query),
// while a second run with other data decides on the same worker, and with results compacted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { billing, final, policy, profile } from '../../offline-model/scripted-replies';
import { runResult } from '../../client/agent-client';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';

const fixture = agentFixture({ queue: 'adv-view-handoff', worker: false });

describe('the view handed over in memory and the one read by the Query', () => {
  it('are the same request to the model, and never another run’s', async () => {
    const first = fixture.startWorker();
    await first.ready;
    const goalA = 'Run A: check user 42 and answer. MARK-A';
    const goalB = 'Run B: check user 42 and answer. MARK-B';
    const a = await fixture.start([profile(42), billing(42), policy(), { hang: true }, final('A done.')], {
      goal: goalA,
      context_tokens: 2_000,
    });
    const b = await fixture.start([profile(42), billing(42), policy(), final('B done.')], { goal: goalB });
    await eventually('run A to ask for its step-4 decision', () =>
      fixture.llm.requests(a.id).some((r) => r.step === 4) ? true : undefined,
    );
    const bResult = await runResult(b.handle);
    assert.equal(bResult.stop_reason, 'success', JSON.stringify(bResult));
    await first.kill();
    const second = fixture.startWorker();
    await second.ready;
    const aResult = await runResult(a.handle);
    assert.equal(aResult.stop_reason, 'success', JSON.stringify(aResult));

    const step4 = fixture.llm.requests(a.id).filter((r) => r.step === 4);
    assert.equal(step4.length, 2, 'the decision was retried once, on the fresh worker');
    assert.deepEqual(step4[1]!.body.messages, step4[0]!.body.messages, 'handoff and Query views differ');
    assert.ok(JSON.stringify(step4[0]!.body).includes('compacted'), 'the view compacted a result');
    for (const r of fixture.llm.requests(a.id)) assert.ok(!JSON.stringify(r.body).includes('MARK-B'));
    for (const r of fixture.llm.requests(b.id)) assert.ok(!JSON.stringify(r.body).includes('MARK-A'));
  });
});
