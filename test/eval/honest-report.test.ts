// Honest reports: the scripted model is named as such and given no dollar figure (a live model keeps
// its name and its cost), and every trial opens onto its whole transcript (the task or the
// customer's turns, every call and result, a person's answers, the stop reason), redacted as the
// model's view is, with the eval's secrets masked, and what anyone wrote arriving only as text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { tau2ReportHtml } from '../../eval/tau2/report-html';
import { tau2Table } from '../../eval/tau2/report';
import {
  OFFLINE_MODEL_NAME,
  RETAIL_CONVERSATION_PROMPTS,
  runMetadata,
  SCRIPTED_MODEL_NAME,
} from '../../eval/harness/run-metadata';
import { transcriptOf } from '../../eval/harness/transcript';
import type { ApprovalEntry } from '../../eval/harness/transcript';
import { transcriptHtml } from '../../eval/harness/transcript-html';
import { formatCost, formatTotalCost, totalCost } from '../../eval/harness/trial-table';
import { DOMAINS, registryOfDomain } from '../../domains/index';
import type { AgentResult, HistoryEntry } from '../../common/types';
import { sampleTau2Report } from '../helpers/sample-reports';

const meta = (liveEnv: NodeJS.ProcessEnv | undefined) =>
  runMetadata({
    suite: 'tau2-retail',
    liveEnv,
    prompts: RETAIL_CONVERSATION_PROMPTS,
    seed: 1,
    server: { address: 'a', namespace: 'n' },
    ownServer: true,
    webUi: { base: null, note: '' },
  });

describe('the model a report names', () => {
  it('is the scripted model, named as such, when the eval scripted it; a live model keeps its name', () => {
    assert.equal(meta(undefined).model, SCRIPTED_MODEL_NAME);
    assert.match(SCRIPTED_MODEL_NAME, /^scripted model \(offline-model\/scripted-llm-server\.ts\)$/);
    // OPENAI_BASE_URL=offline: the worker's own offline model, scripted too.
    assert.equal(meta({ OPENAI_BASE_URL: 'offline', OPENAI_MODEL: 'gpt-4.1-mini' }).model, OFFLINE_MODEL_NAME);
    assert.equal(meta({ OPENAI_API_KEY: 'k', OPENAI_MODEL: 'gpt-4.1' }).model, 'gpt-4.1');
    assert.equal(meta({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }).model, 'gpt-4.1-mini');
  });
});

describe("a scripted model's cost", () => {
  it('is none, said so, never a dollar figure: in the JSON, the HTML and the terminal', () => {
    const report = sampleTau2Report(undefined);
    assert.equal(report.metadata.model, SCRIPTED_MODEL_NAME);
    assert.deepEqual(report.cost, { total_usd: null, known_usd: 0, unknown_trials: 0, none: 'scripted model' });
    for (const r of report.trial_table) assert.equal(r.cost_usd, null, r.id);
    for (const t of report.trials) assert.equal(t.cost_usd, null);
    const baseline = report.phases.baseline!;
    assert.equal(baseline.cost.none, 'scripted model');
    assert.ok(baseline.per_task.every((t) => t.cost_usd === null));
    const html = tau2ReportHtml(report);
    assert.match(html, /<th>model<\/th><td>scripted model \(offline-model\/scripted-llm-server\.ts\)<\/td>/);
    assert.match(html, /<th>cost<\/th><td>none \(scripted model\)<\/td>/);
    assert.doesNotMatch(html, /gpt-4\.1-mini/);
    assert.doesNotMatch(html, /\$\d/);
    assert.match(tau2Table(report), /cost +none \(scripted model\) +none \(scripted model\)/);
    assert.equal(formatTotalCost(totalCost([{ cost_usd: 0.5 }], true)), 'none (scripted model)');
    assert.equal(formatCost(0.5, true), 'none (scripted model)');
  });

  it("is a live model's dollars, and its name stays", () => {
    const report = sampleTau2Report({ OPENAI_API_KEY: 'k', OPENAI_MODEL: 'gpt-4.1-mini' });
    assert.equal(report.metadata.model, 'gpt-4.1-mini');
    assert.equal(report.cost.none, undefined);
    assert.equal(report.cost.unknown_trials, 6);
    assert.ok(report.cost.known_usd > 0);
    const html = tau2ReportHtml(report);
    assert.match(html, /<th>model<\/th><td>gpt-4\.1-mini \(openai\)<\/td>/);
    assert.match(html, /<td>\$0\.0021<\/td>/);
    assert.doesNotMatch(html, /scripted model/);
  });
});

const observation = (tool: string, data: unknown, ok = true) => ({
  tool,
  ok,
  data,
  source: 'users-service',
  bytes: 10,
  truncated: false,
});

function approval(pending: ApprovalEntry['receipt']['pending'], answer: ApprovalEntry['answer']): ApprovalEntry {
  return {
    kind: 'approval',
    atMs: 0,
    receipt: { id: pending.id, decision: answer!.decision, duplicate: false, pending },
    answer,
  };
}

/** A one-shot support run: profile, a refund a person approved, an escalation a person answered, the final answer. */
function supportRun(secret: string): {
  result: Pick<AgentResult, 'history' | 'conversation'>;
  approvals: ApprovalEntry[];
} {
  const history: HistoryEntry[] = [
    {
      step: 1,
      action: { kind: 'tool', name: 'get_user_profile', args: { user_id: 42 } },
      observation: observation('get_user_profile', {
        user: { name: 'Ada Lovelace', tier: 'pro', note: `key ${secret}` },
      }),
    },
    {
      step: 2,
      action: { kind: 'tool', name: 'issue_refund', args: { user_id: 42, amount_usd: 49 } },
      observation: observation('issue_refund', { refund_id: 'r1' }),
    },
    {
      step: 3,
      action: { kind: 'escalate', reason: 'is a second refund allowed?' },
      observation: observation('escalate', {}),
    },
    { step: 4, action: { kind: 'final', answer: 'Refunded USD 49.00.' }, observation: observation('final', {}) },
  ] as unknown as HistoryEntry[];
  const when = { requested_at: '', expires_at: '' };
  return {
    result: { history },
    approvals: [
      approval(
        {
          id: '2-issue_refund-h',
          kind: 'tool_call',
          step: 2,
          tool: 'issue_refund',
          args: { user_id: 42, amount_usd: 49 },
          ...when,
        },
        { id: '2-issue_refund-h', decision: 'approve', operator: 'eval' },
      ),
      approval(
        { id: '3-escalate', kind: 'escalation', step: 3, reason: 'is a second refund allowed?', ...when },
        { id: '3-escalate', decision: 'answer', text: 'No: one refund per order.', operator: 'eval' },
      ),
    ],
  };
}

describe("a trial's transcript", () => {
  const SECRET = 'sk-live-0123456789abcdef';
  const registry = registryOfDomain(DOMAINS.support!);

  it("is the whole run in order: the task, each call and its result, a person's answers where they came", () => {
    const { result, approvals } = supportRun(SECRET);
    const entries = transcriptOf(result, { goal: 'Refund user 42', approvals, registry, secrets: [SECRET] });
    assert.deepEqual(
      entries.map(
        (e) =>
          `${e.from}${'tool' in e && e.tool ? ` ${e.tool}` : ''}${'final' in e ? ' final' : ''}${'escalate' in e ? ' escalate' : ''}`,
      ),
      [
        'task',
        'tool get_user_profile',
        'person issue_refund', // approved before the refund ran
        'tool issue_refund',
        'agent escalate',
        'person', // the answer to the escalation, after it
        'agent final',
      ],
    );
    assert.deepEqual(entries[0], { step: 0, from: 'task', text: 'Refund user 42' });
    assert.deepEqual(entries[5], {
      step: 3,
      from: 'person',
      asked: 'escalation',
      decision: 'answer',
      text: 'No: one refund per order.',
      operator: 'eval',
    });
    // Redacted as the model sees it: the name the tool's spec marks sensitive, and the secret.
    const profile = entries[1] as { result: string };
    assert.doesNotMatch(profile.result, /Ada Lovelace/);
    assert.match(profile.result, /"name":"\[redacted\]"/);
    assert.match(profile.result, /"tier":"pro"/);
    assert.ok(!JSON.stringify(entries).includes(SECRET));
    // A conversation run opens with the customer's turn, not the goal.
    const talk = transcriptOf(
      {
        history: [],
        conversation: {
          turns: [{ n: 1, from: 'customer', text: 'hi', step: 0 }],
          total: 1,
          agent_messages: 0,
          customer_messages: 1,
        },
      },
      { goal: 'Serve the customer' },
    );
    assert.deepEqual(talk, [{ n: 1, from: 'customer', text: 'hi' }]);
    // An accepted final answer leaves no history entry: the result's answer closes the transcript.
    const accepted = transcriptOf(
      {
        history: result.history.slice(0, 2),
        answer: 'Refunded USD 49.00.',
        trace: [{ step: 3, tool: 'final', args_hash: '', ok: true }],
      },
      { goal: 'g' },
    );
    assert.deepEqual(accepted.at(-1), { step: 3, from: 'agent', final: 'Refunded USD 49.00.' });
    assert.equal(transcriptOf({ ...result, answer: 'Refunded USD 49.00.' }).filter((e) => 'final' in e).length, 1);
    // A run that ended without a result still shows its task.
    assert.deepEqual(transcriptOf(undefined, { goal: 'g' }), [{ step: 0, from: 'task', text: 'g' }]);
  });

  it('shows a call the model asked for that never ran, with why', () => {
    const { result, approvals } = supportRun(SECRET);
    const stopped = {
      ...result,
      trace: [
        { step: 5, tool: 'issue_refund', args_hash: 'h', ok: false, stop_reason: 'policy_denied:other_user' as const },
      ],
    };
    const asked = [
      { step: 1, tool: 'get_user_profile', args: { user_id: 42 } },
      { step: 5, tool: 'issue_refund', args: { user_id: 7, amount_usd: 500 } },
      { step: 6 }, // a final answer: not a call
    ];
    const entries = transcriptOf(stopped, { approvals, registry, asked });
    assert.deepEqual(entries.at(-1), {
      step: 5,
      from: 'agent',
      call: { tool: 'issue_refund', args: { user_id: 7, amount_usd: 500 } },
      not_run: 'policy_denied:other_user',
    });
    assert.equal(entries.filter((e) => 'not_run' in e).length, 1);
    assert.match(
      transcriptHtml('t', entries, 'policy_denied:other_user', true),
      /agent \(call not run\)<\/td><td><code>issue_refund\(\{&#34;user_id&#34;:7,&#34;amount_usd&#34;:500\}\)<\/code> → <span class="bad">policy_denied:other_user<\/span>/,
    );
  });

  it('shows in HTML what anyone wrote only as text, never a secret, with the stop reason last', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }),
        fc.constantFrom(
          '<script>alert(1)</script>',
          '"><img src=x onerror=alert(1)>',
          '</code></td></tr></table></details><b>x</b>',
          '&lt;b&gt;',
        ),
        (noise, markup) => {
          const hostile = `${noise}${markup}`;
          const history = [
            {
              step: 1,
              action: { kind: 'tool', name: hostile, args: { q: hostile } },
              observation: observation(hostile, { text: `${hostile} ${SECRET}` }, false),
            },
            { step: 2, action: { kind: 'final', answer: hostile }, observation: observation('final', {}) },
          ] as unknown as HistoryEntry[];
          const entries = transcriptOf(
            {
              history,
              conversation: {
                turns: [{ n: 1, from: 'customer', text: hostile, step: 0 }],
                total: 1,
                agent_messages: 0,
                customer_messages: 1,
              },
            },
            {
              approvals: [
                approval(
                  { id: 'x', kind: 'tool_call', step: 1, tool: hostile, args: {}, requested_at: '', expires_at: '' },
                  { id: 'x', decision: 'reject', reason: hostile, operator: hostile },
                ),
              ],
              secrets: [SECRET],
            },
          );
          const html = transcriptHtml('transcript-x', entries, hostile, true);
          // Only the transcript's own markup: no tag a model, customer, person or tool wrote, one table, one details.
          assert.doesNotMatch(html, /<script|<img|<b>|&lt;/);
          assert.equal((html.match(/<\/details>/g) ?? []).length, 1);
          assert.equal((html.match(/<\/table>/g) ?? []).length, 1);
          assert.ok(!html.includes(SECRET));
          assert.ok(html.endsWith(`</code></td></tr></table></details>`));
          assert.equal((html.match(/<tr>/g) ?? []).length, entries.length + 1);
          assert.match(html, /<td>run<\/td><td>stopped: <code>/);
        },
      ),
      { numRuns: 200 },
    );
  });
});
