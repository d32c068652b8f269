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
import { freePort } from '../../local-servers/free-port';

/** How this worker's decisions read their views (its Prometheus endpoint). */
async function viewReads(port: number): Promise<{ handoff: number; query: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const count = (via: string) =>
    Number(new RegExp(`^agent_model_view_reads_total\\{via="${via}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { handoff: count('handoff'), query: count('query') };
}

const fixture = agentFixture({ queue: 'adv-view-handoff', worker: false });

describe('the view handed over in memory and the one read by the Query', () => {
  it('are the same request to the model, and never another run’s', async () => {
    const [firstPort, secondPort] = [await freePort(), await freePort()];
    const first = fixture.startWorker({ AGENT_METRICS_PORT: String(firstPort) });
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
    // Runs A (steps 1-4) and B (1-4) decided on this worker: from memory, nearly always.
    const onFirst = await viewReads(firstPort);
    assert.ok(onFirst.handoff >= 6, `the first worker's reads: ${JSON.stringify(onFirst)}`);
    await first.kill();
    const second = fixture.startWorker({ AGENT_METRICS_PORT: String(secondPort) });
    await second.ready;
    const aResult = await runResult(a.handle);
    assert.equal(aResult.stop_reason, 'success', JSON.stringify(aResult));

    const onSecond = await viewReads(secondPort);
    assert.ok(onSecond.query >= 1, `the retry read by the Query: ${JSON.stringify(onSecond)}`);
    const step4 = fixture.llm.requests(a.id).filter((r) => r.step === 4);
    assert.equal(step4.length, 2, 'the decision was retried once, on the fresh worker');
    assert.deepEqual(step4[1]!.body.messages, step4[0]!.body.messages, 'handoff and Query views differ');
    assert.ok(JSON.stringify(step4[0]!.body).includes('compacted'), 'the view compacted a result');
    for (const r of fixture.llm.requests(a.id)) assert.ok(!JSON.stringify(r.body).includes('MARK-B'));
    for (const r of fixture.llm.requests(b.id)) assert.ok(!JSON.stringify(r.body).includes('MARK-A'));
  });
});
