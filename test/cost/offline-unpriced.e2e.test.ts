// Workers an operator starts without a model service or a price: OPENAI_BASE_URL=offline serves the
// demo's scripted model from the worker itself, so a run completes with no key and no other
// process; a model the price table does not know runs with its cost unknown, and only a run with a
// dollar budget is refused.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runResult, startRun } from '../../client/agent-client';
import { formatUsage } from '../../cli/format';
import { final, profile } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { agentInput, eventually, REFUND_SCENARIO_ROWS, traceRows, uniqueId } from '../helpers/harness';
import type { WorkerProcess } from '../../local-servers/worker-process';

const fixture = agentFixture({ queue: 'offline-unpriced', worker: false });

/** The worker's `worker ready: ...` line (it follows the SDK's RUNNING state). */
const readyLine = (worker: WorkerProcess) =>
  eventually('the worker ready line', () => /^worker ready: .*$/m.exec(worker.output())?.[0]);

/** Every message down an error's cause chain (WorkflowFailedError, ActivityFailure, ApplicationFailure). */
function messages(err: unknown): string[] {
  const out: string[] = [];
  for (let e = err as Error | undefined; e; e = e.cause as Error | undefined) out.push(e.message);
  return out;
}

describe('a worker with no model service, or no price for its model', { concurrency: true }, () => {
  it('OPENAI_BASE_URL=offline: the worker serves the scripted model itself and a run completes without a key', async () => {
    const on = fixture.queue('offline');
    const worker = fixture.startWorker({ OPENAI_BASE_URL: 'offline', OPENAI_API_KEY: '' }, on);
    assert.match(await readyLine(worker), /model=scripted-llm llm=offline \(the scripted demo model\)/);
    const id = uniqueId('offline');
    const result = await runResult(await startRun(fixture.client, on, agentInput(), id));
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(traceRows(result), REFUND_SCENARIO_ROWS);
    assert.match(result.answer ?? '', /USD 49\.00/);
    assert.equal(result.usage.cost_usd, 0, 'the scripted model is free');
    assert.equal(fixture.llm.requests(id).length, 0, "the test's own scripted server was never asked");
  });

  it('an unpriced model: runs go on with the cost unknown; a run with --max-usd is refused in one line', async () => {
    const on = fixture.queue('unpriced');
    const worker = fixture.startWorker({ OPENAI_MODEL: 'llama-local' }, on);
    assert.match(await readyLine(worker), /model=llama-local .*price=unknown \(runs with --max-usd are refused\)/);

    const id = uniqueId('unpriced');
    fixture.llm.script(id, [profile(), final('User 42 has a profile.')]);
    const result = await runResult(await startRun(fixture.client, on, agentInput(), id));
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.usage.cost_unknown, true);
    assert.ok(result.usage.total_tokens > 0, 'the tokens are counted');
    assert.match(formatUsage(result.usage), /, cost unknown \(the worker has no price for its model\)$/);

    const budgeted = uniqueId('unpriced-usd');
    fixture.llm.script(budgeted, [final('never asked')]);
    const handle = await startRun(fixture.client, on, agentInput({ budget: { max_usd: 1 } }), budgeted);
    const err = await runResult(handle).then(
      () => assert.fail('a run with a dollar budget on an unpriced model should not run'),
      (e: unknown) => e,
    );
    const refusal = messages(err).find((m) => m.startsWith('no price for model'));
    assert.equal(
      refusal,
      'no price for model "llama-local", so a dollar budget (--max-usd) cannot be kept: add it to a JSON file ' +
        'named by AGENT_PRICES_FILE ({"llama-local": {"input_usd_per_mtok": 0.4, "output_usd_per_mtok": 1.6}}); see docs/cost.md',
      messages(err).join(' <- '),
    );
    assert.equal(fixture.llm.requests(budgeted).length, 0, 'the model was never asked');
  });
});
