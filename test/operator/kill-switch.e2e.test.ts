// The operator's kill switch, through the CLI: cancelling during a slow LLM decision aborts the
// HTTP request at once, runs no further tool, and ends the run in Temporal's Canceled state.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowFailedError, CancelledFailure } from '@temporalio/client';
import { profile, billing } from '../../offline-model/scripted-replies';
import { runResult, startRun } from '../../client/agent-client';
import { agentInput, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

const fixture = agentFixture({ queue: 'kill', workerEnv: { OPENAI_TIMEOUT_SECONDS: '60' } });

/** The CLI, which must succeed. */
async function cli(args: string[]) {
  const r = await runCli(fixture.env, args);
  assert.equal(r.code, 0, `agent ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r;
}

describe('agent cancel (the kill switch)', () => {
  it('aborts the running LLM request, runs no further tool, ends Canceled with stop_reason cancelled', async () => {
    const id = uniqueId('cancel');
    fixture.llm.script(id, [
      profile(),
      { hang: true },
      // Would be the next step if the cancel did not stop the run.
      billing(),
    ]);
    const handle = await startRun(fixture.client, fixture.env, agentInput({ budget: { max_seconds: 120 } }), id);
    const slow = await fixture.llm.waitFor((r) => r.workflowId === id && r.step === 2, 20_000);

    const cancelledAt = Date.now();
    const { stdout } = await cli(['cancel', id, '--reason', 'stuck on a slow LLM call']);
    assert.match(stdout, new RegExp(id));

    const aborted = await fixture.llm.waitForAbort((r) => r.id === slow.id, 10_000);
    const abortMs = aborted.closedAt! - cancelledAt;
    // Loose bound (it includes starting the CLI process on a noisy machine); `npm run bench`
    // measures cancel latency properly. Without the abort, the hanging request would never end.
    assert.ok(abortMs < 10_000, `LLM request aborted ${abortMs} ms after the cancel`);

    await assert.rejects(
      handle.result(),
      (err: unknown) => err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure,
    );
    const description = await handle.describe();
    assert.equal(description.status.name, 'CANCELLED');

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'cancelled');
    assert.equal(result.status, 'stopped');
    assert.deepEqual(
      result.trace.map((t) => t.tool),
      ['get_user_profile'],
    );

    // No tool (and no further decision) was scheduled after the cancel request.
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const cancelIndex = events.findIndex((e) => e.workflowExecutionCancelRequestedEventAttributes);
    assert.ok(cancelIndex > 0);
    assert.equal(
      events[cancelIndex]!.workflowExecutionCancelRequestedEventAttributes!.cause,
      'stuck on a slow LLM call',
    );
    const scheduledAfter = events.slice(cancelIndex).filter((e) => e.activityTaskScheduledEventAttributes);
    assert.equal(scheduledAfter.length, 0);
    assert.equal(fixture.llm.requests(id).length, 2);

    // The CLI reports the same partial result.
    const shown = await runCli(fixture.env, ['result', id, '-o', 'json']);
    assert.equal(shown.code, 5, `a cancelled run's result exits 5: ${shown.stderr}`);
    const parsed = JSON.parse(shown.stdout);
    assert.equal(parsed.stop_reason, 'cancelled');
    assert.equal(parsed.trace.length, 1);
  });

  it('refuses to cancel a run that does not exist, with a one-line error', async () => {
    const r = await runCli(fixture.env, ['cancel', uniqueId('nope')]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /no run with id/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });
});
