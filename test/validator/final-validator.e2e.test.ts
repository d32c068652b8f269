// The final validator end to end, with a scripted model, a real worker and the real CLI: an
// unsupported answer is bounced once (the model sees the claims) and the next one accepted; a second
// unsupported answer ends the run unsupported_answer; a misstatement in markup is bounced and "may"
// and "switch plans" are not read as figures; warn accepts and records; off does not check;
// the default follows the allowlist; `agent run --validator` sets it. Then `agent trace -o jsonl` of
// the bounced run: every field of the bounded event contract, decision_summary included.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { billing, final, policy } from '../../offline-model/scripted-replies';
import { runResult } from '../../client/agent-client';
import { VALIDATOR_SOURCE, VALIDATOR_NOTICE } from '../../common/validator/final-validator';
import { argumentDigest, argsHash } from '../../common/tools/hash';
import { resolveBudget } from '../../common/cost/budget';
import type { AgentResult, ObservationForModel } from '../../common/types';
import { agentFixture } from '../helpers/agent-fixture';
import type { FinishedRun } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { uniqueId } from '../helpers/harness';
import { REFUND_ALLOW } from '../helpers/refund-fixtures';
import { requestView } from '../../offline-model/request-view';

const fixture = agentFixture({ queue: 'validator', refunds: true });

/** A reply with the contract's optional decision_summary. */
function summarised(reply: Reply, decision_summary: string): Reply {
  return { ...reply, action: { ...(reply as { action: object }).action, decision_summary } };
}

const WRONG = 'Yes: USD 59.00 on the Enterprise plan, within 30 days.';
const RIGHT = 'Yes: USD 49.00 on the pro_monthly plan, within 14 days.';
const CLAIMS = [
  { kind: 'amount', text: 'USD 59.00' },
  { kind: 'plan', text: 'Enterprise plan' },
  { kind: 'day_count', text: '30 days' },
];

function observationsSent(run: FinishedRun, index: number): Array<{ step: number; observation: ObservationForModel }> {
  return requestView(run.requests[index]!.body)!.untrusted_observations.steps as unknown as Array<{
    step: number;
    observation: ObservationForModel;
  }>;
}

let bounced: FinishedRun;

describe('the final validator', () => {
  it('enforce (the default with issue_refund): bounces an unsupported answer once, then accepts a supported one', async () => {
    bounced = await fixture.run(
      [
        summarised(billing(42), 'Read the billing record'),
        policy(),
        summarised(final(WRONG), 'Answer the refund question'),
        summarised(final(RIGHT), 'Answer again with the billed figures'),
      ],
      { allow: REFUND_ALLOW },
    );
    const { result } = bounced;
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.answer, RIGHT);
    assert.deepEqual(result.validation, { mode: 'enforce', verdict: 'supported', bounces: 1 });
    // The model was told, as an observation of step 3, which figures no observation holds.
    const seen = observationsSent(bounced, 3).find((s) => s.step === 3)!;
    assert.equal(seen.observation.source, VALIDATOR_SOURCE);
    assert.equal(seen.observation.ok, false);
    assert.deepEqual(seen.observation.data, {
      verdict: 'unsupported_answer',
      notice: VALIDATOR_NOTICE,
      unsupported_claims: CLAIMS,
    });
    assert.deepEqual(result.trace[2], {
      step: 3,
      tool: 'final',
      args_hash: argsHash({ answer: WRONG }),
      ok: false,
      unsupported_claims: CLAIMS,
    });
    assert.equal(result.usage.steps, 4);
  });

  it('enforce: a second unsupported answer ends the run unsupported_answer', async () => {
    const { id, result } = await fixture.run([billing(42), final(WRONG), final('Refunded $59.')], {
      validator: 'enforce',
    });
    assert.equal(result.status, 'stopped');
    assert.equal(result.stop_reason, 'unsupported_answer');
    assert.equal(result.answer, undefined);
    assert.deepEqual(result.raw_action, { kind: 'final', answer: 'Refunded $59.' });
    assert.deepEqual(result.validation, {
      mode: 'enforce',
      verdict: 'unsupported',
      bounces: 1,
      unsupported_claims: [{ kind: 'amount', text: '$59' }],
    });
    assert.deepEqual(
      result.trace.map((t) => [t.step, t.tool, t.ok, t.stop_reason]),
      [
        [1, 'get_user_billing', true, undefined],
        [2, 'final', false, undefined],
        [3, 'final', false, 'unsupported_answer'],
      ],
    );
    // The trace says the same: both answers refused, the second ending the run.
    const { code, stdout, stderr } = await runCli(fixture.env, ['trace', id, '-o', 'jsonl']);
    assert.equal(code, 0, stderr);
    const events = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      events.slice(1).map((e) => [e.decision, e.policy_decision, e.validator, e.unsupported_claims, e.observation]),
      [
        [
          'final',
          'denied',
          'unsupported',
          CLAIMS,
          {
            status: 'error',
            source: VALIDATOR_SOURCE,
            bytes: result.history[1]!.observation.bytes,
            truncated: false,
          },
        ],
        ['final', 'denied', 'unsupported', [{ kind: 'amount', text: '$59' }], { status: 'not_run' }],
      ],
    );
    assert.equal(events[2]!.stop_reason, 'unsupported_answer');
  });

  it('enforce reads figures however they are written: markup around a misstated amount is bounced, "may" and "switch plans" are no figures', async () => {
    const { result } = await fixture.run(
      [
        billing(42),
        policy(),
        final('Yes: a refund of USD **59.00**, paid within fourteen days.'),
        final('User 42 may get USD 49.00 back within 14 days. You may also switch plans.'),
      ],
      { allow: REFUND_ALLOW },
    );
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(result.validation, { mode: 'enforce', verdict: 'supported', bounces: 1 });
    assert.deepEqual(result.trace[2]?.unsupported_claims, [{ kind: 'amount', text: 'USD 59.00' }]);
  });

  it('warn (the default without issue_refund): accepts the answer and records the unsupported claims', async () => {
    const run = await fixture.run([billing(42), final(WRONG)]);
    assert.equal(run.result.stop_reason, 'success');
    assert.equal(run.result.answer, WRONG);
    assert.deepEqual(run.result.validation, {
      mode: 'warn',
      verdict: 'unsupported',
      bounces: 0,
      unsupported_claims: CLAIMS,
    });
    assert.equal(run.requests.length, 2, 'nothing was sent back to the model');
  });

  it('off: accepts the answer unchecked, even with issue_refund allowed', async () => {
    const { result } = await fixture.run([final(WRONG)], { allow: REFUND_ALLOW, validator: 'off' });
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.answer, WRONG);
    assert.deepEqual(result.validation, { mode: 'off', verdict: 'unchecked', bounces: 0 });
  });

  it('`agent run --validator enforce` sets the mode of the run', async () => {
    const id = uniqueId('validator-cli');
    fixture.llm.script(id, [final(WRONG), final('No figures: ask support.')]);
    const r = await runCli(fixture.env, [
      'run',
      'User 42 asked: refund?',
      '--user',
      '42',
      '--id',
      id,
      '--validator',
      'enforce',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const result: AgentResult = await runResult(fixture.client.workflow.getHandle(id));
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(result.validation, { mode: 'enforce', verdict: 'supported', bounces: 1 });
  });

  it('`agent trace -o jsonl`: one event per step, with every field of the bounded event contract', async () => {
    const { code, stdout, stderr } = await runCli(fixture.env, ['trace', bounced.id, '-o', 'jsonl']);
    assert.equal(code, 0, stderr);
    const events = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(events.length, 4);
    const budget = resolveBudget(undefined);
    const history = bounced.result.history;

    const [billingStep, policyStep, refused, accepted] = events as Array<Record<string, unknown>>;
    assert.deepEqual(
      { ...billingStep, remaining_budget: undefined },
      {
        step: 1,
        decision: 'tool_call',
        decision_summary: 'Read the billing record',
        tool: 'get_user_billing',
        argument_digest: argumentDigest({ user_id: 42 }),
        policy_decision: 'allowed',
        observation: {
          status: 'ok',
          source: history[0]!.observation.source,
          bytes: history[0]!.observation.bytes,
          truncated: false,
        },
        remaining_budget: undefined,
      },
    );
    assert.equal(policyStep.decision_summary, 'call search_policy(query)', "the runtime's description without one");
    assert.equal(policyStep.argument_digest, argumentDigest({ query: 'refund policy' }));
    assert.deepEqual(
      { ...refused, remaining_budget: undefined },
      {
        step: 3,
        decision: 'final',
        decision_summary: 'Answer the refund question',
        policy_decision: 'denied',
        validator: 'unsupported',
        unsupported_claims: CLAIMS,
        observation: {
          status: 'error',
          source: VALIDATOR_SOURCE,
          bytes: history[2]!.observation.bytes,
          truncated: false,
        },
        remaining_budget: undefined,
      },
    );
    assert.deepEqual(
      { ...accepted, remaining_budget: undefined },
      {
        step: 4,
        decision: 'final',
        decision_summary: 'Answer again with the billed figures',
        policy_decision: 'allowed',
        validator: 'supported',
        remaining_budget: undefined,
        stop_reason: 'success',
      },
    );
    // Remaining budget after each step: steps and tool calls exactly, time within the budget.
    assert.deepEqual(
      events.map((e) => {
        const left = e.remaining_budget as { steps: number; tool_calls: number; tokens: number | null };
        return [left.steps, left.tool_calls, left.tokens];
      }),
      [
        [budget.max_steps - 1, budget.max_tool_calls - 1, null],
        [budget.max_steps - 2, budget.max_tool_calls - 2, null],
        [budget.max_steps - 3, budget.max_tool_calls - 2, null],
        [budget.max_steps - 4, budget.max_tool_calls - 2, null],
      ],
    );
    for (const e of events) {
      const ms = (e.remaining_budget as { wall_time_ms: number }).wall_time_ms;
      assert.ok(ms > 0 && ms <= budget.max_seconds * 1000, String(ms));
    }
  });

  it("the Web UI's activity summaries carry the step event's fields known when they were scheduled", async () => {
    const { events } = await bounced.handle.fetchHistory();
    const summaries: string[] = [];
    for (const e of events ?? []) {
      const summary = e.userMetadata?.summary;
      // A read-only tool's summary is on its local activity marker.
      const local = e.markerRecordedEventAttributes?.markerName === 'core_local_activity';
      if (!(e.activityTaskScheduledEventAttributes || local) || !summary?.data) continue;
      summaries.push(JSON.parse(Buffer.from(summary.data).toString('utf8')) as string);
    }
    const budget = resolveBudget(undefined);
    const left = String.raw`left: (\d+) steps, (\d+) tool calls, \d+ s`;
    const expected: RegExp[] = [
      new RegExp(`^step 1: decide · ${left}$`),
      new RegExp(`^step 1: get_user_billing \\(${argsHash({ user_id: 42 })}\\) · tool_call, policy allowed · ${left}$`),
      new RegExp(`^step 2: decide · ${left}$`),
      new RegExp(`^step 2: search_policy \\(${argsHash({ query: 'refund policy' })}\\) · tool_call, policy allowed`),
      new RegExp(`^step 3: decide · ${left}$`),
      new RegExp(`^step 4: decide · ${left}$`),
    ];
    assert.equal(summaries.length, expected.length, summaries.join('\n'));
    summaries.forEach((s, i) => assert.match(s, expected[i]!));
    const leftOf = (s: string) => /left: (\d+) steps, (\d+) tool calls/.exec(s)!.slice(1).map(Number);
    assert.deepEqual(leftOf(summaries[1]!), [budget.max_steps - 1, budget.max_tool_calls - 1]);
    assert.deepEqual(leftOf(summaries[5]!), [budget.max_steps - 4, budget.max_tool_calls - 2]);
  });
});
