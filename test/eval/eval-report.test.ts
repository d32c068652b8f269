// The report's shared parts, on values worked out by hand: standard errors, the comparison with a
// previous report (regressions by scenario and by rates beyond their noise), costs that stay
// unknown, the Web UI links, the metadata, and the HTML of the trial table, where everything a
// model wrote must arrive as text, never as markup.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { StepEvent } from '../../client/history/trace';
import { compareReports, CompareError, loadPreviousReport } from '../../eval/harness/compare';
import type { ComparableReport } from '../../eval/harness/compare';
import { reportExitCode, verdictLine } from '../../eval/harness/report-files';
import { comparisonHtml, metadataHtml, trialTableHtml } from '../../eval/harness/report-sections-html';
import {
  contractVersion,
  endpointKind,
  runMetadata,
  SCENARIO_PROMPTS,
  SCRIPTED_MODEL_NAME,
} from '../../eval/harness/run-metadata';
import { formatRate, standardError } from '../../eval/harness/standard-error';
import {
  costOf,
  formatTotalCost,
  rateEntry,
  rowId,
  totalCost,
  trajectoryOf,
  trialCost,
} from '../../eval/harness/trial-table';
import type { RateEntry, TrialRow } from '../../eval/harness/trial-table';
import { webUiLinks } from '../../eval/harness/web-ui-links';

const dir = mkdtempSync(path.join(tmpdir(), 'eval-report-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const rows = (scenario: string, passes: boolean[], phase: 'baseline' | 'chaos' = 'baseline') =>
  passes.map((passed, i) => ({ phase, scenario, trial: i + 1, passed }));
const report = (trial_table: ComparableReport['trial_table'], rates: RateEntry[] = []): ComparableReport => ({
  metadata: { suite: 'scenarios', date: '2026-12-01T00:00:00.000Z', commit: 'c0ffee', model: 'gpt-4.1-mini' },
  rates,
  trial_table,
});

function row(over: Partial<TrialRow> = {}): TrialRow {
  return {
    id: rowId('baseline', 'refund', 1),
    phase: 'baseline',
    scenario: 'refund',
    trial: 1,
    workflow_id: 'eval-1',
    url: null,
    passed: true,
    stop_reason: 'success',
    steps: 1,
    tokens: 100,
    cost_usd: 0.0012,
    latency_ms: 1500,
    answer: 'Refunded USD 49.00.',
    problems: [],
    trajectory: [{ step: 1, decision: 'final', summary: 'answer', stop_reason: 'success' }],
    transcript: [],
    ...over,
  };
}

describe('standard error', () => {
  it('is sqrt(p(1-p)/n), none without a measurement', () => {
    assert.equal(standardError(0.5, 4), 0.25);
    assert.equal(standardError(1, 10), 0);
    assert.ok(Math.abs(standardError(0.9, 100)! - 0.03) < 1e-12);
    assert.equal(standardError(null, 3), null);
    assert.equal(standardError(0.5, 0), null);
  });

  it('is shown as ± beside the rate', () => {
    assert.equal(formatRate(0.75, 12), '75.0% ± 12.5% (n=12)');
    assert.equal(formatRate(1, 69), '100.0% ± 0.0% (n=69)');
    assert.equal(formatRate(null, 0), '- (n=0)');
    assert.deepEqual(rateEntry('chaos', 'task_success', { value: 0.5, n: 4 }), {
      phase: 'chaos',
      name: 'task_success',
      value: 0.5,
      n: 4,
      se: 0.25,
      better: 'higher',
    });
  });
});

describe('--compare', () => {
  it('a scenario that passed every trial before and fails one now is a regression; the reverse an improvement', () => {
    const before = report([
      ...rows('refund', [true, true, true]),
      ...rows('flaky', [true, false, true]),
      ...rows('steady', [true, false]),
      ...rows('gone', [true]),
      ...rows('refund', [true], 'chaos'),
    ]);
    const now = report([
      ...rows('refund', [true, false, true]),
      ...rows('flaky', [true, true, true]),
      ...rows('steady', [false, true]),
      ...rows('new', [false]),
      ...rows('refund', [true], 'chaos'),
    ]);
    const c = compareReports(before, now, 'previous.json');
    assert.deepEqual(c.regressions, [
      { kind: 'scenario', phase: 'baseline', name: 'refund', before: '3/3 passed', now: '2/3 passed' },
    ]);
    assert.deepEqual(c.improvements, [
      { kind: 'scenario', phase: 'baseline', name: 'flaky', before: '2/3 passed', now: '3/3 passed' },
    ]);
    assert.deepEqual(c.only_before, ['baseline/gone']);
    assert.deepEqual(c.only_now, ['baseline/new']);
    assert.deepEqual(c.against, {
      file: 'previous.json',
      date: '2026-12-01T00:00:00.000Z',
      commit: 'c0ffee',
      model: 'gpt-4.1-mini',
    });
  });

  it('a rate is a regression only when it moves the wrong way by more than the standard error of the difference', () => {
    const r = (name: string, value: number, n: number, better: RateEntry['better'] = 'higher') =>
      rateEntry('baseline', name, { value, n }, better);
    const before = report(
      [],
      [
        r('task_success', 0.9, 10), // se 0.095
        r('tool_selection_accuracy', 1, 50), // se 0
        r('invalid_argument_rate', 0.02, 50, 'lower'),
        r('supported_answer_rate', 0.5, 100), // se 0.05
        r('recovery_after_tool_error', 0.5, 4),
      ],
    );
    const now = report(
      [],
      [
        r('task_success', 0.8, 10), // -0.1, noise sqrt(.095²+.126²) = 0.158: not a change
        r('tool_selection_accuracy', 0.8, 50), // -0.2, noise 0.057: regression
        r('invalid_argument_rate', 0.3, 50, 'lower'), // +0.28 of a lower-is-better rate: regression
        r('supported_answer_rate', 0.7, 100), // +0.2, noise 0.068: improvement
        { ...r('recovery_after_tool_error', 0, 0), value: null }, // nothing measured now: not compared
      ],
    );
    const c = compareReports(before, now, 'p.json');
    assert.deepEqual(
      c.regressions.map((x) => x.name),
      ['tool_selection_accuracy', 'invalid_argument_rate'],
    );
    assert.deepEqual(
      c.improvements.map((x) => x.name),
      ['supported_answer_rate'],
    );
    assert.equal(c.regressions[0]!.before, '100.0% ± 0.0% (n=50)');
    assert.equal(c.regressions[0]!.now, '80.0% ± 5.7% (n=50)');
  });

  it('a pass to a fail of one trial is a regression even though both standard errors are 0', () => {
    const before = report(rows('a', [true]), [rateEntry('baseline', 'task_success', { value: 1, n: 1 })]);
    const now = report(rows('a', [false]), [rateEntry('baseline', 'task_success', { value: 0, n: 1 })]);
    assert.deepEqual(
      compareReports(before, now, 'p.json').regressions.map((x) => x.kind),
      ['scenario', 'rate'],
    );
  });

  it('the exit code is 1 on a regression even when the suite passed; the verdict line says why', () => {
    const passed = { ...report([]), ok: true };
    assert.equal(reportExitCode(passed), 0);
    const regressed = {
      ...passed,
      comparison: compareReports(report(rows('a', [true])), report(rows('a', [false])), 'p.json'),
    };
    assert.equal(reportExitCode(regressed), 1);
    assert.match(verdictLine(regressed, dir), /^FAIL \(1 regressions since p\.json\): report in /);
    assert.equal(reportExitCode({ ...passed, ok: false }), 1);
  });

  it('refuses, in one line, a file that is missing, not JSON, not a report, or of another suite', () => {
    const write = (name: string, text: string) => {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      return file;
    };
    const cases: Array<[string, RegExp]> = [
      [path.join(dir, 'missing.json'), /missing\.json: no such file/],
      [write('broken.json', '{"trial_table": ['), /broken\.json: not JSON/],
      [write('old.json', JSON.stringify({ ok: true, trials: [] })), /old\.json: not a report with a trial table/],
      [
        write('tau2.json', JSON.stringify({ ...report([]), metadata: { suite: 'tau2-retail' } })),
        /suite "tau2-retail", this run is "scenarios"/,
      ],
    ];
    for (const [file, why] of cases) {
      assert.throws(
        () => loadPreviousReport(file, 'scenarios'),
        (err: Error) => err instanceof CompareError && why.test(err.message) && !err.message.includes('\n'),
      );
    }
    const good = write('good.json', JSON.stringify(report(rows('a', [true]))));
    assert.equal(loadPreviousReport(good, 'scenarios').trial_table.length, 1);
  });
});

const usage = {
  steps: 1,
  tool_calls: 0,
  llm_calls: 1,
  prompt_tokens: 10,
  completion_tokens: 5,
  total_tokens: 15,
  elapsed_ms: 10,
};

describe('cost', () => {
  it('is unknown for a run without a result or on a model without a price, and so is the total', () => {
    assert.equal(costOf({ cost_usd: 0.0042 }), 0.0042);
    assert.equal(costOf({ cost_usd: 0, cost_unknown: true }), null);
    assert.equal(costOf(undefined), null);
    assert.deepEqual(totalCost([{ cost_usd: 0.001 }, { cost_usd: 0.002 }]), {
      total_usd: 0.003,
      known_usd: 0.003,
      unknown_trials: 0,
    });
    const partly = totalCost([{ cost_usd: 0.001 }, { cost_usd: null }]);
    assert.deepEqual(partly, { total_usd: null, known_usd: 0.001, unknown_trials: 1 });
    assert.equal(formatTotalCost(partly), 'unknown (1 trial unpriced; the others $0.0010)');
    assert.equal(formatTotalCost(totalCost([{ cost_usd: null }])), 'unknown');
    // A run cancelled before it wrote a result: the charges its history records; none recorded, unknown.
    const steps = [
      { step: 1, costUsd: 0.0011 },
      { step: 2, windDown: 'steps' },
      { step: 3, costUsd: 0.0022 },
    ];
    assert.equal(trialCost(undefined, steps), 0.0033);
    assert.equal(trialCost(undefined, []), null);
    assert.equal(trialCost({ ...usage, cost_usd: 0.5 }, steps), 0.5);
    assert.equal(trialCost({ ...usage, cost_usd: 0, cost_unknown: true }, steps), null);
  });
});

describe('Web UI links', () => {
  it("none to the eval's own server, nor to a Web UI that does not answer; the note says why", async () => {
    const env = { uiUrl: 'http://127.0.0.1:8233' };
    const own = await webUiLinks(env, false, async () => true);
    assert.equal(own.base, null);
    assert.match(own.note, /eval's own dev server, which ended with it/);
    const silent = await webUiLinks(env, true, async () => false);
    assert.equal(silent.base, null);
    assert.match(silent.note, /http:\/\/127\.0\.0\.1:8233\) did not answer/);
    const kept = await webUiLinks(env, true, async (url) => url === env.uiUrl);
    assert.equal(kept.base, env.uiUrl);
  });

  it('probes for real: a closed port does not answer', async () => {
    const links = await webUiLinks({ uiUrl: 'http://127.0.0.1:9' }, true);
    assert.equal(links.base, null);
  });
});

describe('metadata', () => {
  it('names the endpoint by kind only, never the URL (it may carry credentials)', () => {
    assert.equal(endpointKind(undefined), 'openai');
    assert.equal(endpointKind('https://api.openai.com/v1'), 'openai');
    assert.equal(endpointKind('offline'), 'scripted');
    assert.equal(endpointKind('http://localhost:11434/v1'), 'local');
    assert.equal(endpointKind('http://127.0.0.1:8000/v1'), 'local');
    assert.equal(endpointKind('https://user:secret@llm.example.com/v1'), 'remote');
    const meta = runMetadata(
      {
        suite: 'scenarios',
        liveEnv: {
          OPENAI_MODEL: 'local-llama',
          OPENAI_BASE_URL: 'https://user:secret@llm.example.com/v1',
          OPENAI_API_KEY: 'sk-secret',
        },
        prompts: SCENARIO_PROMPTS,
        seed: 3,
        server: { address: '127.0.0.1:7233', namespace: 'default' },
        ownServer: false,
        webUi: { base: null, note: 'n' },
        infoFile: path.join(dir, 'no-build-info.json'),
      },
      new Date('2026-12-03T00:00:00Z'),
    );
    assert.equal(meta.model, 'local-llama');
    assert.equal(meta.base_url_kind, 'remote');
    assert.equal(meta.commit, null);
    assert.equal(meta.date, '2026-12-03T00:00:00.000Z');
    assert.doesNotMatch(JSON.stringify(meta), /secret/);
  });

  it('versions the prompt and the contract by hash: another prompt, another version', () => {
    const base = {
      suite: 's',
      liveEnv: undefined,
      seed: 1,
      server: { address: 'a', namespace: 'n' },
      ownServer: true,
      webUi: { base: null, note: '' },
    };
    const a = runMetadata({ ...base, prompts: ['You are a ReAct decision engine.'] });
    const b = runMetadata({ ...base, prompts: ['You are a ReAct decision engine!'] });
    assert.match(a.prompt_version, /^[0-9a-f]{12}$/);
    assert.notEqual(a.prompt_version, b.prompt_version);
    assert.equal(a.model, SCRIPTED_MODEL_NAME);
    assert.equal(a.base_url_kind, 'scripted');
    assert.equal(a.contract_version, contractVersion());
    assert.match(a.contract_version, /^[0-9a-f]{12}$/);
  });
});

describe('the trial table in HTML', () => {
  const hostile = '<script>alert("x")</script>';
  it('shows every field, and what a model or a tool wrote only as text', () => {
    const events: StepEvent[] = [
      {
        step: 1,
        decision: 'tool_call',
        decisionSummary: `<img src=x onerror="alert(1)">`,
        tool: 'get_user_billing',
        policyDecision: 'allowed',
        observation: { status: 'ok', source: 'billing<b>db</b>', bytes: 120, truncated: true },
        remainingBudget: { steps: 7, toolCalls: 5, wallTimeMs: 1000, tokens: null },
      },
      {
        step: 2,
        decision: 'final',
        decisionSummary: hostile,
        remainingBudget: { steps: 6, toolCalls: 5, wallTimeMs: 900, tokens: null },
        stopReason: 'success',
      },
    ];
    const failed = row({
      id: rowId('baseline', 'inj"ection <x>', 2),
      scenario: 'inj"ection <x>',
      trial: 2,
      workflow_id: 'wf"><script>',
      url: 'http://ui/namespaces/default/workflows/wf%22%3E?a=1&b="2"',
      passed: false,
      cost_usd: null,
      answer: `${hostile} ${'y'.repeat(200)}`,
      problems: ['answer_facts: <i>49.00</i> missing'],
      trajectory: trajectoryOf(events),
    });
    const html = trialTableHtml([row(), failed], 'links & <notes>');
    assert.doesNotMatch(html, /<script>|<img |<b>db|<i>49/);
    assert.match(html, /&#60;script&#62;alert\(&#34;x&#34;\)&#60;\/script&#62;/);
    assert.match(html, /&#60;img src=x onerror=&#34;alert\(1\)&#34;&#62;/);
    assert.match(html, /billing&#60;b&#62;db&#60;\/b&#62; · 120 B \(truncated\)/);
    assert.match(html, /href="http:\/\/ui\/namespaces\/default\/workflows\/wf%22%3E\?a=1&#38;b=&#34;2&#34;"/);
    assert.match(html, /links &#38; &#60;notes&#62;/);
    // The row's anchor is safe as an id, and the drill-down of a failed trial is open.
    assert.equal(failed.id, 'trial-baseline-inj_ection__x_-2');
    assert.match(html, /<details id="trial-baseline-inj_ection__x_-2" open>/);
    assert.match(html, /<details id="trial-baseline-refund-1">/);
    // Every column: pass, stop reason, steps, tokens, cost (unknown stays unknown), latency, the answer cut short.
    assert.match(
      html,
      /<span class="ok">pass<\/span><\/td><td>success<\/td><td>1<\/td><td>100<\/td><td>\$0\.0012<\/td><td>1500 ms<\/td><td>Refunded USD 49\.00\.<\/td><td><code>eval-1<\/code>/,
    );
    assert.match(html, /<td>unknown<\/td>/);
    assert.match(html, /y{80}…<\/td>/);
    assert.match(html, /<li>answer_facts: &#60;i&#62;49\.00&#60;\/i&#62; missing<\/li>/);
    assert.equal((html.match(/<tr class="(pass|fail)">/g) ?? []).length, 2);
  });

  it('escapes the metadata and the comparison too', () => {
    const meta = runMetadata({
      suite: 'scenarios',
      liveEnv: { OPENAI_MODEL: '<b>model</b>' },
      prompts: ['p'],
      seed: 1,
      server: { address: '127.0.0.1:7233', namespace: 'default' },
      ownServer: false,
      webUi: { base: null, note: 'none' },
    });
    const html = metadataHtml(meta, totalCost([{ cost_usd: null }]));
    assert.doesNotMatch(html, /<b>model/);
    assert.match(html, /&#60;b&#62;model&#60;\/b&#62; \(openai\)/);
    assert.match(html, /<th>cost<\/th><td>unknown<\/td>/);
    const c = compareReports(report(rows('<s>', [true])), report(rows('<s>', [false])), 'prev<1>.json');
    const section = comparisonHtml(c);
    assert.doesNotMatch(section, /<s>|prev<1>/);
    assert.match(section, /baseline\/&#60;s&#62;: 1\/1 passed before, 0\/1 passed now/);
    assert.equal(comparisonHtml(undefined), '');
  });
});
