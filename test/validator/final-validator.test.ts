// The final validator's pure parts: which figures a final answer states (claim extraction), which of
// them the run's observations support (normalised: "$10" is 10.00), misstatements written in other
// spellings and correct answers with figure-like words (each once accepted or refused wrongly), the
// mode defaults, the move the workflow makes (accept, bounce once, unsupported_answer; the first
// validator for recorded runs), and decision_summary in the contract.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkFinalAnswer,
  collectEvidence,
  extractClaims,
  MAX_REPORTED_CLAIMS,
  VALIDATOR_SOURCE,
  validatorModeFor,
  validatorObservation,
} from '../../common/validator/final-validator';
import type { Observation } from '../../common/tools/observation';
import { DECISION_SUMMARY_MAX_CHARS, validateAction } from '../../common/contract';
import { finalMove } from '../../workflows/agent/step';
import type { HistoryEntry } from '../../common/types';
import { stableJson } from '../../common/tools/hash';
import { registryOfDomain } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';
import { formatResult, formatTraceEntry } from '../../cli/format';

const observation = (tool: string, data: unknown, source = tool): Observation => ({
  tool,
  ok: true,
  data,
  source,
  bytes: stableJson(data).length,
  truncated: false,
});

const BILLING = observation('get_user_billing', {
  billing: { currency: 'USD', plan: 'pro_monthly', price_usd: 49, days_since_first_payment: 10 },
});
const POLICY = observation('search_policy', [
  {
    id: 'refund-v3',
    snippet: 'Pro monthly subscriptions are refundable within 14 days from the first payment. Updated 2026-01-15.',
  },
  { id: 'fees', snippet: 'A restocking fee of 15% applies; renewals on March 3, 2026.' },
]);
const EVIDENCE = [BILLING, POLICY];

const claims = (answer: string) => extractClaims(answer).map((c) => [c.kind, c.text]);
const unsupported = (answer: string, observations = EVIDENCE) =>
  checkFinalAnswer(answer, observations).unsupported.map((c) => c.text);

describe('claim extraction', () => {
  it('finds currency amounts in their usual spellings', () => {
    assert.deepEqual(claims('Refund $49, USD 49.00, 49.00 USD, €12.5, 1,234.50 dollars, US$7.'), [
      ['amount', '$49'],
      ['amount', 'USD 49.00'],
      ['amount', '49.00 USD'],
      ['amount', '€12.5'],
      ['amount', '1,234.50 dollars'],
      ['amount', 'US$7'],
    ]);
  });

  it('finds ISO and common dates, with and without a year', () => {
    assert.deepEqual(claims('On 2026-01-15, 2026-01-15T10:00:00Z, January 15th, 2026, 15 Jan 2026, 3/4/2026, Feb 2.'), [
      ['date', '2026-01-15'],
      ['date', '2026-01-15T10:00:00Z'],
      ['date', 'January 15th, 2026'],
      ['date', '15 Jan 2026'],
      ['date', '3/4/2026'],
      ['date', 'Feb 2'],
    ]);
  });

  it('finds plans, percentages and day counts, and nothing in plain numbers', () => {
    assert.deepEqual(
      claims('User 42 is on the Pro plan (tier: enterprise): 15% off, within a 14-day window, 2 weeks.'),
      [
        ['plan', 'Pro plan'],
        ['plan', 'tier: enterprise'],
        ['percent', '15%'],
        ['day_count', '14-day'],
        ['day_count', '2 weeks'],
      ],
    );
    assert.deepEqual(claims('User 42 asked at step 3; see ticket 7.'), []);
  });

  it('names no plan for "your plan", "the refund plan" and the like', () => {
    assert.deepEqual(claims("Your plan, the refund plan and the user's plan are not plan names."), []);
  });

  it('reads a span once: an amount before a date does not become a day of the month', () => {
    assert.deepEqual(claims('USD 14 May 2026'), [
      ['amount', 'USD 14'],
      ['date', 'May 2026'],
    ]);
  });

  it('is linear on long hostile text', () => {
    const text = '$1 '.repeat(5000) + '9'.repeat(20_000) + ' plan'.repeat(2000);
    const started = process.hrtime.bigint();
    extractClaims(text);
    // Generous: catastrophic backtracking would take minutes, not a second.
    assert.ok(Number(process.hrtime.bigint() - started) / 1e9 < 5);
  });

  it('is linear on space-grouped digits that never end a number (each group would restart the scan)', () => {
    const time = (text: string) => {
      const started = process.hrtime.bigint();
      checkFinalAnswer(text, EVIDENCE);
      return Number(process.hrtime.bigint() - started);
    };
    for (const tail of ['1 days', '1 %']) {
      const hostile = 'Refund of 1' + ' 111'.repeat(8150) + tail;
      const baseline = 'Refund of 1' + ' x11'.repeat(8150) + tail;
      time(baseline);
      time(hostile.slice(0, 2000));
      // Quadratic was over a thousand times the baseline; linear is about the same, noise included.
      const ratio = time(hostile) / time(baseline);
      assert.ok(ratio < 40, `${tail}: ${ratio.toFixed(1)} times the baseline`);
    }
  });
});

describe('claims against the evidence', () => {
  it('accepts figures the observations hold, however they are written', () => {
    for (const answer of [
      'Yes: USD 49.00, within 14 days.',
      'Refunded $49 on your pro_monthly plan.',
      'Your Pro monthly plan (49 dollars) was paid 10 days ago.',
      'A 15% fee applies; the policy dates from January 15, 2026, renewal 2026-03-03.',
      'Within 2 weeks.',
      'The refund is possible.',
    ]) {
      assert.deepEqual(unsupported(answer), [], answer);
    }
  });

  it('names the figures no observation holds', () => {
    assert.deepEqual(unsupported('Yes: $59.00 on the Enterprise plan, within 30 days, 20% fee, by 2026-02-01.'), [
      '$59.00',
      'Enterprise plan',
      '30 days',
      '20%',
      '2026-02-01',
    ]);
  });

  it('normalises numbers: $10, 10.00 and 1,000 vs 1000', () => {
    const data = [observation('get_user_billing', { price: '10.00', limit: 1000 })];
    assert.deepEqual(unsupported('$10 now, $1,000.00 max', data), []);
    assert.deepEqual(unsupported('$10.01', data), ['$10.01']);
  });

  it('a percentage may appear as a fraction in the data', () => {
    assert.deepEqual(unsupported('20% fee', [observation('fees', { rate: 0.2 })]), []);
  });

  it("never counts the validator's own observation as evidence", () => {
    const bounce = validatorObservation([{ kind: 'amount', text: '$59.00' }]);
    assert.equal(bounce.source, VALIDATOR_SOURCE);
    assert.equal(collectEvidence([bounce]).has('n:59'), false);
    assert.deepEqual(unsupported('$59.00', [...EVIDENCE, bounce]), ['$59.00']);
  });

  it('reports each unsupported claim once, at most MAX_REPORTED_CLAIMS', () => {
    const answer = Array.from({ length: 50 }, (_, i) => `$${1000 + i}`).join(' ') + ' $1000';
    assert.equal(checkFinalAnswer(answer, EVIDENCE).unsupported.length, MAX_REPORTED_CLAIMS);
    assert.deepEqual(unsupported('$7 and $7'), ['$7']);
  });
});

// Billing says 49: each of these answers misstates it, and each was accepted before the validator
// read figures however they are written.
describe('misstatements of an amount are refused however they are written', () => {
  for (const written of [
    '59 €',
    '59 US dollars',
    '59$',
    'USD  59.00',
    '$５９',
    'USD **59.00**',
    '59 bucks',
    'fifty-nine dollars',
    '59 United States dollars',
    '59.00 (USD)',
    'USD (59.00)',
    'USD 49.00/59.00',
    '$49 or 59',
  ]) {
    it(`refuses ${JSON.stringify(written)}`, () => {
      assert.equal(unsupported(`Yes, the refund is ${written}.`).length, 1);
    });
  }

  it('accepts the true amount in the same forms', () => {
    for (const written of ['49 United States dollars', '49.00 (USD)', 'USD (49.00)', 'USD 49.00/49', '$49 or 49'])
      assert.deepEqual(unsupported(`Yes, the refund is ${written}.`), [], written);
  });

  it('refuses "refund of USD 59.00" when 59 is only part of an id, a key or a time of day in the data', () => {
    const answer = 'I issued a refund of USD 59.00 to user 42.';
    for (const data of [
      { refund: { refund_id: 59, user_id: 42, amount_usd: 49, currency: 'USD', state: 'confirmed' } },
      { idempotency_key: 'agent-run-59:3:issue_refund:5f59e2' },
      { created_at: '2026-03-03T10:59:00.000Z' },
      { note: 'ticket rf_59 filed at 10:59 by #59' },
    ]) {
      assert.deepEqual(
        unsupported(answer, [BILLING, observation('issue_refund', data)]),
        ['USD 59.00'],
        stableJson(data),
      );
    }
  });

  it('reads "€49,99" as 49.99 (a decimal comma), not 49', () => {
    assert.deepEqual(
      extractClaims('€49,99').map((c) => c.alternatives),
      [[['n:49.99']]],
    );
    assert.deepEqual(unsupported('The refund is €49,99.'), ['€49,99']);
    assert.deepEqual(unsupported('The refund is €49,99.', [observation('billing', { price: 49.99 })]), []);
  });

  it('reads number words up to the thousands and slang', () => {
    const data = [observation('billing', { total: 1205, fee: 49.99, deposit: 2000 })];
    assert.deepEqual(
      unsupported(
        'One thousand two hundred and five euros, forty-nine dollars and ninety-nine cents, 2 grand, a thousand bucks.',
        data,
      ),
      ['a thousand bucks'],
    );
  });
});

// Each of these answers is correct, and each was refused: a word read as a figure it is not.
describe('correct answers are accepted: words are figures only where they are used as one', () => {
  const user7 = [
    observation('get_user_billing', { currency: 'USD', plan: 'free', price_usd: 0, days_since_first_payment: 120 }),
    observation('search_policy', [
      { id: 'free-v1', snippet: 'Free plan has no billable payments and cannot be refunded.' },
    ]),
  ];

  it('"User 7 may not get a refund ... (USD 0.00)": a number before "may" is no date', () => {
    assert.deepEqual(
      unsupported('User 7 may not get a refund: the Free plan has no billable payments (USD 0.00).', user7),
      [],
    );
    assert.deepEqual(unsupported('User 7 May not get a refund (USD 0.00).', user7), []);
  });

  it('"... USD 49.00 ... You may also switch plans.": "switch" is no plan', () => {
    assert.deepEqual(unsupported('Yes: USD 49.00 within 14 days. You may also switch plans.'), []);
  });

  it('"cheaper tier" and "cancel plan" name no plan', () => {
    assert.deepEqual(unsupported('A cheaper tier exists; you may cancel plan renewals at any time.'), []);
  });

  it('a month name is a date where it is used as one', () => {
    assert.deepEqual(claims('Renews on 7 May, on May 8, the 9th of May, 10 May 2026; in March 2026.'), [
      ['date', '7 May'],
      ['date', 'May 8'],
      ['date', '9th of May'],
      ['date', '10 May 2026'],
      ['date', 'March 2026'],
    ]);
    assert.deepEqual(claims('You may 3 times; they march 5 abreast; Jan 5 is capitalised, jan 5 is not.'), [
      ['date', 'Jan 5'],
    ]);
  });

  it('a plan is a name the data or the usual vocabulary knows, an identifier, or a proper name', () => {
    const data = [observation('catalog', { plans: [{ sku: 'zephyr', price: 9 }] }), BILLING];
    assert.deepEqual(
      unsupported('The Zephyr plan, the Pro monthly plan, the Enterprise tier and the Orion plan.', data),
      ['Enterprise tier', 'Orion plan'],
    );
    assert.deepEqual(claims('An annual plan, a monthly subscription, Switch Plans, Cheaper Tier.'), []);
  });
});

describe('validator mode', () => {
  it('defaults to enforce when a tool that states facts (issue_refund) is allowed, warn otherwise; an explicit mode wins', () => {
    assert.equal(
      validatorModeFor({ allow: ['get_user_billing', 'issue_refund'] }, registryOfDomain(supportDomain)),
      'enforce',
    );
    assert.equal(validatorModeFor({ allow: ['get_user_billing'] }, registryOfDomain(supportDomain)), 'warn');
    assert.equal(
      validatorModeFor({ allow: ['issue_refund'], validator: 'off' }, registryOfDomain(supportDomain)),
      'off',
    );
    assert.equal(validatorModeFor({ allow: [], validator: 'enforce' }, registryOfDomain(supportDomain)), 'enforce');
  });
});

describe('finalMove', () => {
  const history: HistoryEntry[] = [
    { step: 1, action: { kind: 'tool', name: 'get_user_billing', args: { user_id: 42 } }, observation: BILLING },
  ];
  const wrong = { kind: 'final' as const, answer: 'Refunded $59.' };

  it('enforce: bounces the first unsupported answer with an observation naming the claims', () => {
    const move = finalMove(wrong, 2, history, 'enforce');
    assert.equal(move.next, 'bounce');
    if (move.next !== 'bounce') return;
    assert.deepEqual(move.trace.unsupported_claims, [{ kind: 'amount', text: '$59' }]);
    assert.equal(move.trace.tool, 'final');
    assert.equal(move.history.observation.source, VALIDATOR_SOURCE);
    assert.deepEqual((move.history.observation.data as { unsupported_claims: unknown }).unsupported_claims, [
      { kind: 'amount', text: '$59' },
    ]);
    assert.deepEqual(move.history.action, wrong);
  });

  it('enforce: a second unsupported answer ends the run unsupported_answer; a supported one is accepted', () => {
    const bounced = finalMove(wrong, 2, history, 'enforce');
    assert.equal(bounced.next, 'bounce');
    if (bounced.next !== 'bounce') return;
    const after = [...history, bounced.history];
    const again = finalMove(wrong, 3, after, 'enforce');
    assert.equal(again.next, 'stop');
    assert.equal(again.next === 'stop' && again.reason, 'unsupported_answer');
    assert.equal(again.next === 'stop' && again.extra?.validation?.verdict, 'unsupported');
    const right = finalMove({ kind: 'final', answer: 'Refunded $49.' }, 3, after, 'enforce');
    assert.deepEqual(right, { next: 'finish', validation: { mode: 'enforce', verdict: 'supported', bounces: 1 } });
  });

  it('warn accepts and records the claims; off does not check', () => {
    assert.deepEqual(finalMove(wrong, 2, history, 'warn'), {
      next: 'finish',
      validation: {
        mode: 'warn',
        verdict: 'unsupported',
        bounces: 0,
        unsupported_claims: [{ kind: 'amount', text: '$59' }],
      },
    });
    assert.deepEqual(finalMove(wrong, 2, history, 'off'), {
      next: 'finish',
      validation: { mode: 'off', verdict: 'unchecked', bounces: 0 },
    });
  });
});

describe('decision_summary in the action contract', () => {
  const text = '{"kind":"tool","name":"get_user_billing","args":{"user_id":42},"decision_summary":"Check billing"}';

  it('is accepted with the summary option, and kept on the action', () => {
    assert.deepEqual(validateAction(text, { summary: true }), {
      ok: true,
      action: { kind: 'tool', name: 'get_user_billing', args: { user_id: 42 }, decision_summary: 'Check billing' },
    });
  });

  it('is an extra key without it (runs from before the field existed)', () => {
    assert.equal((validateAction(text) as { reason?: string }).reason, 'extra_keys');
  });

  it('is cut to its cap and kept on one line; a non-string is invalid_action:bad_summary', () => {
    const long = JSON.stringify({ kind: 'final', answer: 'ok', decision_summary: 'x\n'.repeat(500) });
    const result = validateAction(long, { summary: true });
    assert.ok(result.ok);
    const summary = result.ok ? result.action.decision_summary! : '';
    assert.equal(Array.from(summary).length, DECISION_SUMMARY_MAX_CHARS);
    assert.ok(!summary.includes('\n') && summary.endsWith('…'));
    const bad = validateAction('{"kind":"escalate","reason":"r","decision_summary":7}', { summary: true });
    assert.equal(!bad.ok && bad.reason, 'bad_summary');
  });
});

describe("the CLI's text of a validated result", () => {
  it('names the unsupported claims in the result block and in the trace line', () => {
    const claims = [{ kind: 'amount' as const, text: 'USD 59.00' }];
    const result = {
      status: 'stopped' as const,
      stop_reason: 'unsupported_answer' as const,
      raw_action: { kind: 'final', answer: 'USD 59.00' },
      trace: [],
      history: [],
      usage: {
        steps: 3,
        tool_calls: 1,
        llm_calls: 3,
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
        elapsed_ms: 0,
      },
      budget: { max_steps: 8, max_tool_calls: 6, max_seconds: 60, max_tokens: 0, max_usd: 0 },
      validation: { mode: 'enforce' as const, verdict: 'unsupported' as const, bounces: 1, unsupported_claims: claims },
    };
    assert.ok(
      formatResult(result).includes(
        'final validator (enforce): unsupported, 1 answer returned; unsupported: "USD 59.00 (amount)"',
      ),
      formatResult(result).join('\n'),
    );
    assert.equal(
      formatTraceEntry({ step: 2, tool: 'final', args_hash: 'abc', ok: false, unsupported_claims: claims }),
      'step 2: final (abc) refused by the final validator ("USD 59.00 (amount)")',
    );
  });
});

describe('breaks an adversary found', () => {
  const DATA = [
    observation('get_user_billing', {
      amount_usd: 49,
      date: '2026-01-15',
      refund_window_days: 14,
      fee_pct: 15,
      plan: 'basic_monthly',
      count: 2,
    }),
  ];
  const refused = (answer: string, data = DATA) => unsupported(answer, data);

  it('checks every number with a currency sign: "2 $59" is $59, not $2', () => {
    assert.deepEqual(refused('You have 2 $59 charges.'), ['$59']);
    assert.deepEqual(refused('You have 2 $49 charges.'), []);
  });

  it('reads scale words and checks both ends of a range', () => {
    assert.deepEqual(refused('9 hundred dollars'), ['9 hundred dollars']);
    assert.deepEqual(refused('$3 hundred'), ['$3 hundred']);
    assert.deepEqual(refused('$3 hundred', [observation('b', { amount: 300 })]), []);
    assert.deepEqual(refused('Charged $5 mil.', [observation('b', { amount: 5_000_000 })]), []);
    assert.deepEqual(refused('USD 49-590'), ['USD 49-590']);
    assert.deepEqual(refused('USD 49-590', [observation('b', { low: 49, high: 590 })]), []);
    assert.deepEqual(refused('January 15-20, 2026'), ['January 15-20, 2026']);
    assert.deepEqual(refused('January 15-20, 2026', [observation('b', { from: '2026-01-15', to: '2026-01-20' })]), []);
    assert.deepEqual(refused('3 to 14 business days, 2-14 days'), ['3 to 14 business days']);
  });

  it('reads "$.99", ".5%", "20-pc" and "%20"', () => {
    for (const answer of ['$.99', '.5%', '20-pc', '%20']) assert.deepEqual(refused(answer), [answer], answer);
    assert.deepEqual(refused('$.99 and .5%', [observation('b', { price: 0.99, rate: 0.5 })]), []);
    assert.deepEqual(refused('15-pc, %15'), []);
  });

  it('reads a day count with a word between number and unit', () => {
    for (const answer of ['30 more days', '30 additional days', '30 consecutive days', '30 business-days']) {
      assert.deepEqual(refused(answer), [answer], answer);
    }
    assert.deepEqual(refused('14 more days, 14 business-days'), []);
  });

  it('reads dates with hyphens, a comma after the month, and eight digits', () => {
    for (const answer of ['16-Jan-2026', 'Jan-16-2026', 'January, 16 2026', '20260116']) {
      assert.deepEqual(refused(answer), [answer], answer);
    }
    assert.deepEqual(refused('15-Jan-2026, Jan-15-2026, January, 15 2026, 20260115'), []);
  });

  it('reads plans in quotes, before "-tier", and before a capitalised "Plan"', () => {
    assert.deepEqual(refused('the "Premium" plan'), ['"Premium" plan']);
    assert.deepEqual(refused('the “Premium” plan'), ['“Premium” plan']);
    assert.deepEqual(refused('your Premium-tier access'), ['Premium-tier']);
    assert.deepEqual(refused('the Zephyr Plan'), ['Zephyr Plan']);
    assert.deepEqual(refused('the "Basic" plan, Basic-tier, the Basic Plan'), []);
  });

  it('takes no figure from an id key in any case, nor from an ordinal', () => {
    for (const key of ['ID', 'user_ID', 'userID']) {
      assert.deepEqual(refused('Refunded $59.', [observation('b', { [key]: 59 })]), ['$59'], key);
    }
    assert.deepEqual(refused('Refunded $59.', [observation('b', { note: 'the 59th request' })]), ['$59']);
  });

  it('accepts dollars and cents written apart', () => {
    assert.deepEqual(refused('Charged 49 dollars 99 cents.', [observation('b', { amount: 49.99 })]), []);
    assert.deepEqual(refused('Charged 49 dollars 99 cents.'), ['49 dollars 99 cents']);
  });
});
