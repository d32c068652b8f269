// Cost accounting, the dollar budget and top-ups, end to end: a worker process pricing every
// attempt (AGENT_PRICES_FILE), the scripted model reporting usage (also on failed attempts), the
// real CLI. Prices here: prompt tokens free, $0.002 a completion token, so a decision's worst case
// (512 completion tokens, $1.024) does not depend on the prompt's size.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { final, noMessage, profile, serverErrorWithUsage } from '../../offline-model/scripted-replies';
import { byStep } from '../../offline-model/scripted-replies';
import { runResult, runState } from '../../client/agent-client';
import type { AgentResult } from '../../common/types';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { eventually, uniqueId } from '../helpers/harness';
import { startWorkerProcess } from '../../local-servers/worker-process';
import { requestView } from '../../offline-model/request-view';

const pricesDir = mkdtempSync(path.join(tmpdir(), 'cost-e2e-'));
const PRICES_FILE = path.join(pricesDir, 'prices.json');
writeFileSync(PRICES_FILE, JSON.stringify({ 'gpt-4.1-mini': { input_usd_per_mtok: 0, output_usd_per_mtok: 2000 } }));

const fixture = agentFixture({ queue: 'cost', workerEnv: { AGENT_PRICES_FILE: PRICES_FILE } });
/** What 20 completion tokens (the scripted model's default usage) cost here. */
const CALL_USD = 0.04;

describe('every attempt that reported usage is charged, once', () => {
  it('a retry storm: a 5xx with usage, an answer without a message, then success', async () => {
    const { result, requests } = await fixture.run(
      byStep({
        1: [
          serverErrorWithUsage({ prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 }),
          noMessage({ prompt_tokens: 30, completion_tokens: 5 }),
          profile(),
        ],
        2: final('Done.'),
      }),
      { llm_max_attempts: 3 },
    );
    assert.equal(result.stop_reason, 'success', JSON.stringify(result));
    assert.equal(requests.length, 4);
    assert.deepEqual(
      result.usage.attempts?.map((a) => [a.step, a.attempt, a.outcome, a.completion_tokens]),
      [
        [1, 1, 'failed', 10],
        [1, 2, 'failed', 5],
        [1, 3, 'ok', 20],
        [2, 1, 'ok', 20],
      ],
    );
    assert.equal(result.usage.charged_attempts, 4);
    assert.equal(result.usage.llm_calls, 4);
    assert.equal(result.usage.cost_usd, 0.11); // 0.02 + 0.01 + 0.04 + 0.04
    assert.equal(result.usage.completion_tokens, 10 + 5 + 20 + 20);
    assert.equal(result.usage.prompt_tokens, 50 + 30 + 100 + 100);
  });

  it('a decision that fails on every attempt still charges the attempts that reported usage', async () => {
    const { result, requests } = await fixture.run(
      byStep({ 1: [noMessage({ prompt_tokens: 30, completion_tokens: 5 }), noMessage({ completion_tokens: 7 })] }),
      { llm_max_attempts: 2 },
    );
    assert.equal(result.stop_reason, 'llm_error');
    assert.equal(requests.length, 2);
    assert.deepEqual(
      result.usage.attempts?.map((a) => [a.attempt, a.outcome, a.completion_tokens]),
      [
        [1, 'failed', 5],
        [2, 'failed', 7],
      ],
    );
    assert.equal(result.usage.cost_usd, 0.024);
  });
});

describe('--max-usd', () => {
  it('ends with the final answer of a wind-down, not a cut-off', async () => {
    const id = uniqueId('usd-wind-down');
    // $2.06: step 1 can pay for a tool step and a final answer ($2.048); after it ($0.04) it cannot.
    fixture.llm.script(id, byStep({ 1: profile(), 2: final('Partial answer: user 42 is on pro_monthly.') }));
    const ran = await runCli(fixture.env, [
      'run',
      'refund?',
      '--user',
      '42',
      '--id',
      id,
      '--max-usd',
      '2.06',
      '--wait',
      '-o',
      'json',
    ]);
    assert.equal(ran.code, 0, ran.stderr);
    const result = JSON.parse(ran.stdout) as AgentResult;
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.answer, 'Partial answer: user 42 is on pro_monthly.');
    assert.deepEqual(result.wind_down, { step: 2, reason: 'max_usd' });
    assert.deepEqual(
      result.trace.map((t) => [t.step, t.tool, t.wind_down]),
      [
        [1, 'get_user_profile', undefined],
        [2, 'final', 'max_usd'],
      ],
    );
    assert.equal(result.usage.cost_usd, 2 * CALL_USD);
    assert.equal(result.budget.max_usd, 2.06);
    // The model was told, and each call carried the completion cap its reservation paid for.
    const requests = fixture.llm.requests(id);
    assert.equal(requests[0]!.body.max_completion_tokens, 512);
    assert.equal(requestView(requests[0]!.body)!.wind_down, undefined);
    assert.equal(requests[1]!.body.max_completion_tokens, 512);
    assert.equal((requestView(requests[1]!.body)!.wind_down as { reason: string }).reason, 'max_usd');

    const shown = await runCli(fixture.env, ['result', id]);
    assert.match(shown.stdout, /wound down: at step 2, max_usd/);
    assert.match(shown.stdout, /\$0\.0800/);
    const status = await runCli(fixture.env, ['status', id]);
    assert.match(status.stdout, /cost: +\$0\.0800 of \$2\.0600 \(\$1\.9800 left\), 2 attempts charged/);
    const trace = await runCli(fixture.env, ['trace', id]);
    assert.match(trace.stdout, /final \(wind-down: max_usd\)/);
    assert.match(trace.stdout, /step cost \$0\.0400\b/);
  });

  it('a budget that cannot pay even for a final answer: budget_exhausted:usd, and no call is made', async () => {
    // $0.20 buys 100 completion tokens: fewer than the smallest useful cap (128).
    const { result, requests } = await fixture.run([final('never asked')], { budget: { max_usd: 0.2 } });
    assert.equal(result.stop_reason, 'budget_exhausted:usd');
    assert.equal(requests.length, 0);
    assert.equal(result.usage.cost_usd ?? 0, 0);
  });

  it('a small budget shrinks the completion cap it sends', async () => {
    // $0.50 left buys 250 completion tokens; the run winds down at once.
    const { result, requests } = await fixture.run([final('Short answer.')], { budget: { max_usd: 0.5 } });
    assert.equal(result.stop_reason, 'success');
    assert.equal(requests[0]!.body.max_completion_tokens, 250);
    assert.deepEqual(result.wind_down, { step: 1, reason: 'max_usd' });
  });
});

describe('the step budget winds down too', () => {
  it('the last step asks for the final answer', async () => {
    const { result, requests } = await fixture.run([profile(), final('What I know so far.')], {
      budget: { max_steps: 2 },
    });
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(result.wind_down, { step: 2, reason: 'max_steps' });
    assert.equal((requestView(requests[1]!.body)!.wind_down as { reason: string }).reason, 'max_steps');
  });
});

describe('agent extend', () => {
  it('tops up a run that waits for it, recorded with who and why; the run completes', async () => {
    const id = uniqueId('topup');
    fixture.llm.script(id, [final('Done with the extra budget.')]);
    const started = await runCli(fixture.env, [
      'run',
      'refund?',
      '--user',
      '42',
      '--id',
      id,
      '--max-usd',
      '0.2',
      '--topup-wait',
      '120',
    ]);
    assert.equal(started.code, 0, started.stderr);
    const handle = fixture.client.workflow.getHandle(id);
    const waiting = await eventually('the run to wait for a top-up', async () => {
      const state = await runState(handle);
      return state.awaiting_topup ? state : undefined;
    });
    assert.equal(waiting.phase, 'awaiting_topup');
    assert.equal(waiting.awaiting_topup?.reason, 'budget_exhausted:usd');
    assert.equal(fixture.llm.requests(id).length, 0);
    const status = await runCli(fixture.env, ['status', id]);
    assert.match(status.stdout, /awaiting: +a top-up \(budget_exhausted:usd\)/);

    const refused = await runCli(fixture.env, ['extend', id, '--usd', '5000', '--reason', 'too much']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refused the top-up: usd must be a number from 0 to 1000/);
    const noReason = await runCli(fixture.env, ['extend', id, '--usd', '1']);
    assert.equal(noReason.code, 2);
    assert.match(noReason.stderr, /--reason is required/);

    const extended = await runCli(
      fixture.env,
      ['extend', id, '--usd', '2.5', '--steps', '2', '--reason', 'VIP customer'],
      {
        AGENT_OPERATOR: 'alice',
      },
    );
    assert.equal(extended.code, 0, extended.stderr);
    assert.match(extended.stdout, /budget now .*\$2\.7000/);

    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.answer, 'Done with the extra budget.');
    assert.equal(result.budget.max_usd, 2.7);
    assert.equal(result.budget.max_steps, 10);
    assert.equal(result.extensions?.length, 1);
    assert.deepEqual(
      { ...result.extensions![0]!, at: undefined },
      { usd: 2.5, steps: 2, reason: 'VIP customer', operator: 'alice', step: 0, at: undefined },
    );
    // The Update is in the history: who and why, for the audit.
    const history = await handle.fetchHistory();
    const updates = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    assert.equal(updates.length, 1);
    assert.equal(updates[0]!.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name, 'extend');
    const ended = await runCli(fixture.env, ['extend', id, '--steps', '1', '--reason', 'late']);
    assert.equal(ended.code, 1);
    assert.match(ended.stderr, /has ended/);
  });

  it('without a top-up the run ends as it would have when the wait times out', async () => {
    const { result, requests } = await fixture.run([final('never asked')], {
      budget: { max_usd: 0.2 },
      topup_wait_seconds: 1,
    });
    assert.equal(result.stop_reason, 'budget_exhausted:usd');
    assert.equal(requests.length, 0);
  });
});

describe('the worker', () => {
  // A model it cannot price runs, with its cost unknown: offline-unpriced.e2e.test.ts.
  it('refuses to start with a prices file it cannot read, in one line', async () => {
    const worker = startWorkerProcess(fixture.queue('cost-unreadable-prices'), {
      OPENAI_BASE_URL: fixture.llm.baseUrl,
      AGENT_PRICES_FILE: path.join(tmpdir(), `no-such-prices-${uniqueId('file')}.json`),
    });
    await assert.rejects(worker.ready);
    const lines = worker.output().trim().split('\n');
    assert.equal(lines.length, 1, worker.output());
    assert.match(lines[0]!, /^worker: AGENT_PRICES_FILE \S+: cannot read it as JSON \(ENOENT/);
  });
});
