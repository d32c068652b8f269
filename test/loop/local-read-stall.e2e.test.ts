// Adversary: read-only tools as local activities (docs/runtime-semantics.md, "Read-only tools as
// local activities"), against a real worker whose reads stall (the AGENT_TOOL_PAUSE_MS drill: a
// first attempt waits, heartbeating, cancellable). Promised: an attempt is cut off after
// min(timeoutSeconds, 5 s) and retried; a cancel or a deadline cancels the read without waiting for
// that cut; the echo of the call (step, args, key) never reaches the model, the result or status.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { final, profile } from '../../offline-model/scripted-replies';
import { runResult, runState } from '../../client/agent-client';
import { LOCAL_CALL_FIELD } from '../../common/temporal/local-call';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { eventually } from '../helpers/harness';

const PAUSE_MS = 30_000;
const fixture = agentFixture({ queue: 'adv-local-reads', workerEnv: { AGENT_TOOL_PAUSE_MS: String(PAUSE_MS) } });

describe('a stalled local read', () => {
  it('is cut off at 5 s and retried; its echo reaches neither the model nor the result nor status', async () => {
    const run = await fixture.run([profile(42), final('Found the profile.')]);
    assert.equal(run.result.stop_reason, 'success', JSON.stringify(run.result));
    assert.ok(run.ms < PAUSE_MS / 2, `took ${run.ms} ms: the 5 s cut did not end the stalled attempt`);
    assert.equal(run.requests.length, 2);
    const second = JSON.stringify(run.requests[1]!.body);
    assert.ok(second.includes('get_user_profile'), second);
    assert.ok(!second.includes(LOCAL_CALL_FIELD), `the echo reached the model: ${second}`);
    assert.ok(
      !second.includes('idempotency') && !second.includes(run.id),
      `the call's key reached the model: ${second}`,
    );
    assert.ok(!JSON.stringify(run.result).includes(LOCAL_CALL_FIELD));
    for (const args of [
      ['status', run.id],
      ['status', run.id, '-o', 'json'],
      ['result', run.id, '-o', 'json'],
    ]) {
      const shown = await runCli(fixture.env, args);
      assert.equal(shown.code, 0, shown.stderr);
      assert.ok(!shown.stdout.includes(LOCAL_CALL_FIELD), `${args.join(' ')}: ${shown.stdout}`);
    }
    const trace = await runCli(fixture.env, ['trace', run.id, '-o', 'jsonl']);
    assert.equal(trace.code, 0, trace.stderr);
    assert.match(trace.stdout, /get_user_profile/);
    assert.ok(!trace.stdout.includes(LOCAL_CALL_FIELD), trace.stdout);
  });

  it('is cancelled by agent cancel without waiting out its 5 s cut', async () => {
    const { id, handle } = await fixture.start([profile(42), final('never')]);
    await eventually('the run to call its tool', async () =>
      (await runState(handle)).phase === 'calling_tool' ? true : undefined,
    );
    const sent = Date.now();
    const cancelled = await runCli(fixture.env, ['cancel', id, '--reason', 'adversary']);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    const result = await runResult(handle);
    const ms = Date.now() - sent;
    assert.equal(result.stop_reason, 'cancelled', JSON.stringify(result));
    assert.ok(ms < 4_500, `the cancel took ${ms} ms`);
    assert.equal(fixture.llm.requests(id).length, 1);
  });

  it('is cut off by the run deadline (max_seconds)', async () => {
    const started = Date.now();
    const run = await fixture.run([profile(42), final('never')], { budget: { max_seconds: 2 } });
    assert.equal(run.result.stop_reason, 'max_seconds', JSON.stringify(run.result));
    assert.ok(Date.now() - started < 4_500, `took ${Date.now() - started} ms`);
  });
});
