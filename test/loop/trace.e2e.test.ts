// `agent trace` rebuilds the step events from the workflow history alone. Runs of several
// shapes (success with a token budget, a denied tool, a continue-as-new chain, a cancelled run)
// are traced AFTER the worker is gone, and every event is checked against what the run did: its
// result (trace, observations, usage) and the LLM requests the scripted model received.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { final, tool } from '../../offline-model/scripted-replies';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { cancelRun, runResult, startRun } from '../../client/agent-client';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { msToTs } from '@temporalio/common/lib/time';
import { rebuildTrace } from '../../client/history/trace';
import type { StepEvent } from '../../client/history/trace';
import type { DecodePayloads, HistoryEvent } from '../../client/history/read-history';
import { resolveBudget } from '../../common/cost/budget';
import type { AgentInput, AgentResult } from '../../common/types';
import { answerApproval, pendingApproval } from '../../client/approvals';
import type { ApprovalRequest } from '../../client/approvals';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { billingOf, finalAnswer, REFUND_ALLOW, refundOf } from '../helpers/refund-fixtures';

interface Finished {
  id: string;
  input: AgentInput;
  result: AgentResult;
  llmRequests: number;
}
const runs: Record<string, Finished> = {};

async function play(
  name: string,
  replies: Reply[],
  overrides: Partial<AgentInput> = {},
  cancelAtKey?: string,
  answers: ApprovalRequest[] = [],
): Promise<void> {
  const id = uniqueId(`trace-${name}`);
  fixture.llm.script(id, replies);
  const input = agentInput(overrides);
  const handle = await startRun(fixture.client, fixture.env, input, id);
  if (cancelAtKey) {
    await fixture.llm.waitFor(
      (r) => r.workflowId === id && (r.idempotencyKey ?? '').endsWith(`:${cancelAtKey}`),
      20_000,
    );
    await cancelRun(fixture.client, id, 'trace test: cancelled mid-decision');
  }
  for (const answer of answers) {
    const pending = await eventually('a call awaiting a person', () => pendingApproval(handle));
    await answerApproval(fixture.client, id, { ...answer, id: pending.id, operator: 'trace-test' });
  }
  const result = await runResult(handle);
  runs[name] = { id, input, result, llmRequests: fixture.llm.requests(id).length };
}

const fixture = agentFixture({
  queue: 'trace',
  refunds: true,
  workerEnv: { OPENAI_TIMEOUT_SECONDS: '30' },
  // Every run the tests read, played before they start.
  setup: playAll,
});

async function playAll(): Promise<void> {
  await play(
    'success',
    [
      tool('get_user_profile', { user_id: 42 }),
      tool('get_user_billing', { user_id: 42 }),
      tool('search_policy', { query: '  refund policy ' }),
      final('Yes: USD 49.00.'),
    ],
    { budget: { max_tokens: 10_000, max_steps: 6 } },
  );
  await play('denied', [tool('get_user_profile', { user_id: 42 }), tool('search_policy', { query: 'refund' })], {
    allow: ['get_user_profile'],
  });
  await play(
    'continued',
    [
      tool('get_user_profile', { user_id: 42 }),
      tool('get_user_billing', { user_id: 42 }),
      tool('search_policy', { query: 'refund' }),
      final('Done.'),
    ],
    { continue_as_new_every: 2 },
  );
  await play(
    'cancelled',
    [tool('get_user_profile', { user_id: 42 }), { hang: true }],
    { budget: { max_seconds: 120 } },
    'decide:2',
  );
  // People in the loop: an escalation answered, a refund rejected, another approved and made.
  const user = fixture.refunds.nextUser();
  await play(
    'approvals',
    [
      { action: { kind: 'escalate', reason: 'The user mentions a chargeback.' } },
      billingOf(user),
      refundOf(user, 49),
      refundOf(user, 49, 'paid 10 days ago; support agreed after review'),
      finalAnswer(),
    ],
    { principal: String(user), allow: REFUND_ALLOW, budget: { max_seconds: 120 } },
    undefined,
    [
      { decision: 'answer', text: 'Check billing first, then decide.' },
      { decision: 'reject', reason: 'the reason is not specific enough' },
      { decision: 'approve' },
    ],
  );
  const late = fixture.refunds.nextUser();
  await play('approval-timeout', [billingOf(late), refundOf(late, 49)], {
    principal: String(late),
    allow: REFUND_ALLOW,
    approval_timeout_seconds: 2,
  });

  // From here on nothing answers queries or runs tasks: the trace must come from history alone.
  await fixture.worker.stop();
}

async function traceOf(id: string): Promise<StepEvent[]> {
  const { code, stdout, stderr } = await runCli(fixture.env, ['trace', id, '--jsonl']);
  assert.equal(code, 0, stderr);
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as StepEvent);
}

/** Every event against the run's own result: steps, tools, digests, policy, observations, budgets. */
function assertMatches(events: StepEvent[], run: Finished): void {
  const { result, input } = run;
  const budget = resolveBudget(input.budget);
  assert.deepEqual(
    events.map((e) => e.step),
    Array.from({ length: result.usage.steps }, (_, i) => i + 1),
    'one event per step the run took',
  );

  const toolEvents = events.filter((e) => e.decision === 'tool_call' || e.decision === 'escalate');
  const policyOf = (t: AgentResult['trace'][number]) =>
    t.tool === 'escalate'
      ? undefined
      : t.ok ||
          t.approval !== undefined ||
          t.stop_reason === 'approval_timeout' ||
          t.stop_reason?.startsWith('tool_error:')
        ? 'allowed'
        : 'denied';
  const approvalOf = (t: AgentResult['trace'][number]) =>
    t.approval ?? (t.stop_reason === 'approval_timeout' ? 'timeout' : undefined);
  assert.deepEqual(
    toolEvents.map((e) => [
      e.step,
      e.tool,
      e.argumentDigest!.slice('sha256:'.length, 'sha256:'.length + 12),
      e.policyDecision,
      e.approval,
    ]),
    result.trace.map((t) => [t.step, t.tool, t.args_hash, policyOf(t), approvalOf(t)]),
  );
  for (const e of toolEvents) assert.match(e.argumentDigest!, /^sha256:[0-9a-f]{64}$/);

  for (const h of result.history) {
    const e = events.find((x) => x.step === h.step)!;
    assert.deepEqual(e.observation, {
      status: h.observation.ok ? 'ok' : 'error',
      source: h.observation.source,
      bytes: h.observation.bytes,
      truncated: h.observation.truncated,
    });
  }

  let calls = 0;
  let lastWall = Infinity;
  for (const e of events) {
    // A final answer's policy decision is the final validator's; only tool calls count.
    if (e.decision === 'tool_call' && e.policyDecision === 'allowed') calls++;
    assert.equal(e.remainingBudget.steps, budget.max_steps - e.step, `steps left after step ${e.step}`);
    assert.equal(e.remainingBudget.toolCalls, budget.max_tool_calls - calls, `tool calls left after step ${e.step}`);
    assert.ok(
      e.remainingBudget.wallTimeMs <= budget.max_seconds * 1000 && e.remainingBudget.wallTimeMs <= lastWall,
      'time left only shrinks',
    );
    lastWall = e.remainingBudget.wallTimeMs;
  }
  assert.equal(calls, result.usage.tool_calls);
  const last = events[events.length - 1]!;
  assert.equal(last.stopReason, result.stop_reason);
  if (last.decision === 'final') {
    assert.equal(last.validator, result.validation!.verdict);
    assert.equal(last.policyDecision, 'allowed');
  }
  for (const e of events.slice(0, -1)) assert.equal(e.stopReason, undefined);
  if (budget.max_tokens > 0) assert.equal(last.remainingBudget.tokens, budget.max_tokens - result.usage.total_tokens);
  else for (const e of events) assert.equal(e.remainingBudget.tokens, null);
}

describe('agent trace (step events rebuilt from history, no worker running)', () => {
  it('a successful run: every step, with digests, observations and budgets as the run had them', async () => {
    const run = runs.success!;
    const events = await traceOf(run.id);
    assertMatches(events, run);
    assert.equal(run.llmRequests, events.length, 'one LLM decision per step');
    assert.deepEqual(
      events.map((e) => [e.decision, e.decisionSummary]),
      [
        ['tool_call', 'call get_user_profile(user_id)'],
        ['tool_call', 'call get_user_billing(user_id)'],
        ['tool_call', 'call search_policy(query)'],
        ['final', 'final answer (15 chars)'],
      ],
    );
    // The step event contract, key for key.
    assert.deepEqual(Object.keys(events[1]!), [
      'step',
      'decision',
      'decisionSummary',
      'tool',
      'argumentDigest',
      'policyDecision',
      'observation',
      'remainingBudget',
    ]);
    assert.deepEqual(events[1]!.observation, {
      status: 'ok',
      source: 'billing-service',
      bytes: run.result.history[1]!.observation.bytes,
      truncated: false,
    });
    // The tool ran with the gateway's normalised arguments ("refund policy", trimmed): that is what the digest covers.
    assert.equal(events[2]!.argumentDigest!.slice(7, 19), run.result.trace[2]!.args_hash);
    assert.ok(events[3]!.remainingBudget.tokens! < 10_000);
  });

  it('a denied tool call: policy denied, nothing observed, the stop reason on that step', async () => {
    const run = runs.denied!;
    const events = await traceOf(run.id);
    assertMatches(events, run);
    assert.equal(run.result.stop_reason, 'tool_denied:search_policy');
    const denied = events[1]!;
    assert.equal(denied.decision, 'tool_call');
    assert.equal(denied.tool, 'search_policy');
    assert.equal(denied.policyDecision, 'denied');
    assert.deepEqual(denied.observation, { status: 'not_run' });
    assert.equal(
      denied.remainingBudget.toolCalls,
      resolveBudget(undefined).max_tool_calls - 1,
      'a denied call uses no tool-call budget',
    );
  });

  it('a run that continued as new is traced across all its runs', async () => {
    const run = runs.continued!;
    const events = await traceOf(run.id);
    assertMatches(events, run);
    assert.equal(run.result.stop_reason, 'success');
    const { stdout } = await runCli(fixture.env, ['trace', run.id]);
    assert.match(stdout, /\d+ runs \(continued as new\)/);
  });

  it('a cancelled run: the steps it took, the decision in flight marked cancelled, stop reason cancelled', async () => {
    const run = runs.cancelled!;
    const events = await traceOf(run.id);
    assert.equal(run.result.stop_reason, 'cancelled');
    assert.deepEqual(
      events.map((e) => [e.step, e.decision]),
      [
        [1, 'tool_call'],
        [2, 'no_decision'],
      ],
    );
    assert.equal(events[0]!.observation?.status, 'ok');
    assert.equal(events[1]!.decisionSummary, 'LLM call cancelled');
    assert.equal(events[1]!.stopReason, 'cancelled');
  });

  it('people in the loop: an escalation answered, a call rejected, one approved, one timed out', async () => {
    const run = runs.approvals!;
    const events = await traceOf(run.id);
    assertMatches(events, run);
    assert.equal(run.result.stop_reason, 'success');
    assert.deepEqual(
      events.map((e) => [
        e.step,
        e.decision,
        e.tool,
        e.policyDecision,
        e.approval,
        e.observation?.status,
        e.observation?.source,
      ]),
      [
        [1, 'escalate', 'escalate', undefined, 'answer', 'ok', 'operator'],
        [2, 'tool_call', 'get_user_billing', 'allowed', undefined, 'ok', 'billing-service'],
        [3, 'tool_call', 'issue_refund', 'allowed', 'reject', 'error', 'operator'],
        [4, 'tool_call', 'issue_refund', 'allowed', 'approve', 'ok', run.result.history[3]!.observation.source],
        // Accepted by the final validator (enforce: issue_refund is allowed): the amount was observed.
        [5, 'final', undefined, 'allowed', undefined, undefined, undefined],
      ],
    );

    const timedOut = runs['approval-timeout']!;
    const late = await traceOf(timedOut.id);
    assertMatches(late, timedOut);
    assert.deepEqual(late.at(-1), {
      ...late.at(-1),
      step: 2,
      tool: 'issue_refund',
      policyDecision: 'allowed',
      approval: 'timeout',
      observation: { status: 'not_run' },
      stopReason: 'approval_timeout',
    });
  });

  it('prints a readable table by default, and a one-line error for an unknown run', async () => {
    const { code, stdout } = await runCli(fixture.env, ['trace', runs.success!.id]);
    assert.equal(code, 0);
    assert.match(stdout, /from its history/);
    assert.match(
      stdout,
      /^\s+1\s+tool_call\s+get_user_profile\s+sha256:feaa769a39ae…\s+allowed\s+ok users-service \d+ B/m,
    );
    assert.match(stdout, /^\s+4\s+final\s+final answer \(15 chars\)/m);
    assert.match(stdout, /ended: ok \(success\) after 4 step\(s\), 3 tool call\(s\), 480 tokens/);

    const missing = await runCli(fixture.env, ['trace', uniqueId('nope')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no run with id/);
  });
});

/** The recorded histories, seen from the compiled test (dist/test/). */
const HISTORIES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'histories');
/** A history recorded by the code from before step tags: only `agent trace` reads it, nothing replays it. */
const OLD_TRACES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'trace');

describe('agent trace reads what the workflow recorded, not activity ids', () => {
  // Fixtures are plain JSON payloads (scripts/record-histories.ts).
  const decode: DecodePayloads = async (payloads, index = 0) => {
    const payload = payloads?.[index];
    return payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
  };
  const fixture = (dir: string, file: string): HistoryEvent[] => {
    const json = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    const times = (json.events as Array<{ eventTime: string }>).map((e) => msToTs(Date.parse(e.eventTime)));
    // Event times as a fetched history has them (Long seconds).
    return (historyFromJSON(json).events ?? []).map((e, i) => ({ ...e, eventTime: times[i] }));
  };
  const withoutActivityIds = (events: HistoryEvent[]): HistoryEvent[] =>
    events.map((e) => {
      const scheduled = e.activityTaskScheduledEventAttributes;
      return scheduled ? { ...e, activityTaskScheduledEventAttributes: { ...scheduled, activityId: 'x' } } : e;
    });
  const traceOfEvents = async (events: HistoryEvent[]) =>
    (await rebuildTrace('fixture', [{ runId: 'r', events }], decode)).events;
  const resultOf = async (events: HistoryEvent[]) =>
    (await decode(events.at(-1)!.workflowExecutionCompletedEventAttributes!.result!.payloads)) as AgentResult;
  const toolSteps = (events: StepEvent[]) =>
    events.filter((e) => e.tool !== undefined).map((e) => [e.step, e.tool, e.argumentDigest!.slice(7, 19)]);

  it('a run recorded with step tags: the same trace whatever its activity ids say', async () => {
    const events = fixture(HISTORIES, 'refund-success.json');
    const result = await resultOf(events);
    const traced = await traceOfEvents(events);
    assert.deepEqual(
      toolSteps(traced),
      result.trace.map((t) => [t.step, t.tool, t.args_hash]),
    );
    assert.deepEqual(await traceOfEvents(withoutActivityIds(events)), traced);
  });

  it('a run recorded before step tags (legacy): read by its activity ids, and only by them', async () => {
    const events = fixture(OLD_TRACES, 'refund-success.before-step-tags.json');
    const result = await resultOf(events);
    assert.deepEqual(
      toolSteps(await traceOfEvents(events)),
      result.trace.map((t) => [t.step, t.tool, t.args_hash]),
    );
    assert.deepEqual(toolSteps(await traceOfEvents(withoutActivityIds(events))), []);
  });
});
