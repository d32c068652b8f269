// `agent extend` against a run waiting for a top-up, and hostile `extend` Updates sent with
// Temporal's own CLI: a top-up raises only the budgets the run has, needs a readable reason, and
// every refusal is made by the Update's validator (nothing in the history), after which the run
// takes a good top-up and finishes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { byStep, final, message, profile } from '../../offline-model/scripted-replies';
import { runResult, runState } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { eventually } from '../helpers/harness';

const fixture = agentFixture({ queue: 'extend' });

/** `temporal workflow update execute --name extend`; never rejects: the exit code is checked. */
function temporalExtend(id: string, inputs: string[], more: string[] = []): Promise<{ code: number; output: string }> {
  const cli = process.env.TEMPORAL_CLI_PATH;
  assert.ok(cli, 'TEMPORAL_CLI_PATH is set by `npm test`');
  const args = ['workflow', 'update', 'execute', '--workflow-id', id, '--name', 'extend', ...more];
  for (const input of inputs) args.push('--input', input);
  args.push('--address', fixture.env.address, '--namespace', fixture.env.namespace);
  return new Promise((resolve) => {
    execFile(cli, args, { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) || 1 : 0, output: `${stdout}${stderr}` }),
    );
  });
}

/** What reaches the validator: the JSON the payload carries, and the line it answers with (the CLI logs it quoted). */
const HOSTILE: Array<[string, RegExp]> = [
  ['null', /a top-up is an object/],
  ['[]', /a top-up is an object/],
  ['[{"steps":1,"reason":"x"}]', /a top-up is an object/],
  ['"two more steps"', /a top-up is an object/],
  ['42', /a top-up is an object/],
  ['{}', /at least one of usd/],
  ['{"steps":-1,"reason":"x"}', /steps must be a whole number from 0 to 1000/],
  ['{"steps":1e999,"reason":"x"}', /steps must be a whole number/], // Infinity once parsed
  ['{"seconds":-1e999,"reason":"x"}', /seconds must be a whole number/],
  ['{"steps":1e308,"reason":"x"}', /steps must be a whole number/],
  ['{"steps":2.5,"reason":"x"}', /steps must be a whole number/],
  ['{"steps":"2","reason":"x"}', /steps must be a whole number/],
  ['{"steps":null,"reason":"x"}', /steps must be a whole number/],
  ['{"steps":1,"reason":"x","max_steps":100}', /unknown field \\?"max_steps\\?"/],
  ['{"steps":1,"reason":"x","__proto__":{"usd":5}}', /unknown field \\?"__proto__\\?"/],
  ['{"usd":0.5,"reason":"x"}', /no dollar budget/],
  ['{"tokens":1000,"steps":1,"reason":"x"}', /no token budget/],
  ['{"steps":1}', /needs a reason/],
  ['{"steps":1,"reason":7}', /needs a reason/],
  ['{"steps":1,"reason":" \\t\\n"}', /needs a reason/],
  ['{"steps":1,"reason":"\\u200b\\u200d\\u2060\\ufeff"}', /needs a reason/],
  ['{"steps":1,"reason":"\\u3164\\u2800\\u00a0"}', /needs a reason/],
  ['{"steps":1,"reason":"\\u0301\\u202e"}', /needs a reason/],
  ['{"steps":1,"reason":"VIP\\u001b[2J"}', /needs a reason/],
  [`{"steps":1,"reason":"${'r'.repeat(100_000)}"}`, /reason is longer than 500 characters/],
  ['{"steps":1,"reason":"x","operator":{"admin":true}}', /operator must be/],
  ['{"steps":1,"reason":"x","operator":"\\u200b"}', /operator must be/],
];

describe('agent extend: only the budgets the run has, a readable reason', () => {
  it('refuses what would lower or add a budget and hostile payloads, in the validator; the run then finishes', async () => {
    const { id, handle } = await fixture.start([final('Done with the extra steps.')], {
      budget: { max_steps: 1 },
      topup_wait_seconds: 300,
    });
    const waiting = await eventually('the run to wait for a top-up', async () => {
      const state = await runState(handle);
      return state.awaiting_topup ? state : undefined;
    });
    assert.deepEqual(
      [waiting.budget.max_usd, waiting.budget.max_tokens, waiting.budget.max_steps],
      [0, 0, 1],
      'no dollar or token budget',
    );

    // The operator's CLI: one line, exit 1.
    const refusals: Array<[string[], RegExp]> = [
      [
        ['--usd', '0.01', '--steps', '2', '--reason', 'more room'],
        /refused the top-up: this run has no dollar budget \(max_usd\); a top-up cannot add one$/,
      ],
      [['--tokens', '100', '--reason', 'more room'], /refused the top-up: this run has no token budget/],
      [['--steps', '1', '--reason', '\u200b\u00a0\u2060'], /refused the top-up: a top-up needs a reason: visible text/],
    ];
    for (const [flags, message] of refusals) {
      const refused = await runCli(fixture.env, ['extend', id, ...flags], { AGENT_OPERATOR: 'mallory' });
      assert.equal(refused.code, 1, `${flags.join(' ')}: ${refused.stdout}${refused.stderr}`);
      assert.equal(refused.stdout, '');
      assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
      assert.match(refused.stderr.trim(), message);
    }

    // Temporal's own CLI, past the agent CLI's checks: each payload is refused by the validator.
    for (const [input, message] of HOSTILE) {
      const sent = await temporalExtend(id, [input]);
      assert.notEqual(sent.code, 0, `${input.slice(0, 80)} was accepted: ${sent.output.slice(0, 300)}`);
      assert.match(sent.output, message, input.slice(0, 80));
    }
    const none = await temporalExtend(id, []);
    assert.notEqual(none.code, 0);
    assert.match(none.output, /a top-up is an object/);

    // Nothing changed: the same budget, still waiting, no model call, no Update in the history, no
    // failed workflow task.
    const after = await runState(handle);
    assert.deepEqual(after.budget, waiting.budget);
    assert.equal(after.phase, 'awaiting_topup');
    assert.equal(after.extensions, undefined);
    assert.equal(fixture.llm.requests(id).length, 0);
    const events = (await handle.fetchHistory()).events ?? [];
    assert.equal(events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length, 0);
    assert.equal(events.filter((e) => e.workflowTaskFailedEventAttributes).length, 0);

    const granted = await runCli(fixture.env, ['extend', id, '--steps', '2', '--reason', 'VIP customer'], {
      AGENT_OPERATOR: 'alice',
    });
    assert.equal(granted.code, 0, granted.stderr);
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success', JSON.stringify(result));
    assert.equal(result.answer, 'Done with the extra steps.');
    assert.deepEqual(result.budget, { ...waiting.budget, max_steps: 3 });
    assert.deepEqual(
      result.extensions?.map((e) => ({ ...e, at: undefined })),
      [{ steps: 2, reason: 'VIP customer', operator: 'alice', step: 0, at: undefined }],
    );
    const accepted = ((await handle.fetchHistory()).events ?? []).filter(
      (e) => e.workflowExecutionUpdateAcceptedEventAttributes,
    );
    assert.equal(accepted.length, 1);
  });

  it("a top-up's Update id sent again with Temporal's CLI, hostile payloads and all, on later runs of the chain: answered, never granted again", async () => {
    const { id, handle } = await fixture.start(
      byStep({ 1: message('Hello! How can I help?'), 2: profile(42) }, message('Noted.')),
      { conversation: {}, continue_as_new_every: 1, budget: { max_steps: 20, max_tool_calls: 5, max_seconds: 120 } },
    );
    const awaitingCustomer = async () =>
      eventually('the run to wait for the customer', async () =>
        (await runState(handle)).phase === 'awaiting_customer' ? true : undefined,
      );
    await awaitingCustomer();
    const first = await handle.describe();
    const updateId = `operator-topup-${id}`;
    const granted = await temporalExtend(id, ['{"steps":3,"reason":"VIP"}'], ['--update-id', updateId]);
    assert.equal(granted.code, 0, granted.output);

    // Two steps later the chain is on another run, which never saw the Update.
    await sayToRun(fixture.client, id, { text: 'Please look me up, I am user 42.' });
    await eventually('a later run of the chain', async () => {
      const now = await handle.describe();
      return now.runId !== first.runId && (await runState(handle)).phase === 'awaiting_customer' ? true : undefined;
    });
    for (const input of ['{"steps":3,"reason":"VIP"}', 'null', '{"steps":1000,"reason":"x"}', '"two more"']) {
      const repeat = await temporalExtend(id, [input], ['--update-id', updateId]);
      assert.equal(repeat.code, 0, `${input}: ${repeat.output}`);
      assert.match(repeat.output, /"?duplicate"?:\s*true/, input);
      assert.match(repeat.output, /"?extensions"?:\s*1\b/, input);
    }
    // A new Update id is a new top-up, checked as any other.
    assert.notEqual((await temporalExtend(id, ['null'], ['--update-id', `${updateId}-2`])).code, 0);

    await sayToRun(fixture.client, id, { end: true });
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'customer_ended');
    assert.equal(result.budget.max_steps, 23, 'one top-up of 3 steps');
    assert.deepEqual(
      result.extensions?.map((e) => ({ ...e, at: undefined, step: undefined })),
      [{ steps: 3, reason: 'VIP', step: undefined, at: undefined }],
      'granted once, reported without its Update id',
    );
  });
});
