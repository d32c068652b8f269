// Top-ups on hand-made budgets: the `extend` Update's validator (checkExtend) and the sum it grants
// (extendedBudget). A top-up raises only the budgets it names, never sets a limit where the run had
// none, needs a reason a person can read; and, over generated hostile requests, nothing it accepts
// ever lowers a budget.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import { resolveBudget } from '../../common/cost/budget';
import type { Budget } from '../../common/cost/budget';
import { checkExtend, EXTEND_LIMITS, extendedBudget } from '../../common/cost/extend';
import type { ExtendRequest, ExtendTarget } from '../../common/cost/extend';
import { hasVisibleText } from '../../common/text/visible-text';

const running = (budget: Budget, more: Partial<ExtendTarget> = {}): ExtendTarget => ({
  granted: 0,
  running: true,
  budget,
  ...more,
});
/** A run with every budget: dollars and tokens too. */
const LIMITED = resolveBudget({ max_usd: 1, max_tokens: 5000 });
/** The default run: no dollar or token budget. */
const OPEN = resolveBudget({});

/** Reasons that print as nothing (or hide what they say). */
const INVISIBLE = [
  '',
  ' ',
  ' \t ',
  '\n',
  '\u00a0', // no-break space
  '\u3000', // ideographic space
  '\u200b\u200c\u200d', // zero-width space, non-joiner, joiner
  '\u2060', // word joiner
  '\ufeff', // byte order mark
  '\u00ad', // soft hyphen
  '\u202e\u2066', // bidi override, isolate
  '\u0301\u0308', // combining marks with no base
  '\ufe0f', // variation selector
  '\u3164', // Hangul filler
  '\u115f\u1160', // Hangul choseong and jungseong fillers
  '\u2800', // braille blank
  '\u{e0020}\u{e0041}', // tag characters
  '\u{f0000}', // private use
  '\u0000\u001b\u007f\u0085', // controls
];

describe('top-ups (checkExtend)', () => {
  it('are bounded, need a reason and an amount, and only reach a running run', () => {
    const ok = { usd: 0.5, steps: 5, seconds: 120, reason: 'the customer is waiting' };
    assert.equal(checkExtend(ok, running(LIMITED)), undefined);
    assert.match(checkExtend(ok, running(LIMITED, { running: false }))!, /has ended/);
    assert.match(checkExtend(ok, running(LIMITED, { granted: 100 }))!, /already has 100 top-ups/);
    assert.match(checkExtend({ ...ok, reason: ' ' }, running(LIMITED))!, /needs a reason/);
    assert.match(checkExtend({ reason: 'x' }, running(LIMITED))!, /at least one/);
    assert.match(checkExtend({ ...ok, usd: 5000 }, running(LIMITED))!, /usd must be a number from 0 to 1000/);
    assert.match(checkExtend({ ...ok, steps: 1.5 }, running(LIMITED))!, /steps must be a whole number/);
    assert.match(checkExtend({ ...ok, steps: -1 }, running(LIMITED))!, /steps must be/);
    assert.match(checkExtend({ ...ok, max_steps: 9 }, running(LIMITED))!, /unknown field "max_steps"/);
    assert.match(checkExtend({ ...ok, operator: 'x'.repeat(101) }, running(LIMITED))!, /operator/);
  });

  it('refuse a budget the run does not have: no dollar or token limit is set by a top-up', () => {
    const reason = 'the customer is waiting';
    assert.match(
      checkExtend({ usd: 0.01, steps: 2, reason }, running(OPEN))!,
      /^this run has no dollar budget \(max_usd\); a top-up cannot add one$/,
    );
    assert.match(checkExtend({ tokens: 100, reason }, running(OPEN))!, /^this run has no token budget \(max_tokens\)/);
    assert.match(checkExtend({ usd: 0, steps: 1, reason }, running(OPEN))!, /no dollar budget/);
    assert.equal(checkExtend({ steps: 2, tool_calls: 1, seconds: 30, reason }, running(OPEN)), undefined);
    assert.equal(checkExtend({ usd: 0.01, tokens: 100, reason }, running(LIMITED)), undefined);
    // max_tool_calls 0 is a limit (no tool calls), so it can be raised.
    assert.equal(checkExtend({ tool_calls: 1, reason }, running(resolveBudget({ max_tool_calls: 0 }))), undefined);
  });

  it('need a reason in visible text, without control characters, and a readable operator', () => {
    for (const reason of INVISIBLE) {
      assert.match(
        checkExtend({ steps: 1, reason }, running(OPEN))!,
        /needs a reason: visible text/,
        JSON.stringify(reason),
      );
      assert.equal(hasVisibleText(reason), false, JSON.stringify(reason));
    }
    assert.match(checkExtend({ steps: 1, reason: 'VIP\u001b[2J' }, running(OPEN))!, /needs a reason/);
    for (const reason of ['VIP', 'é', '退款', '\u{1f4b8}', ' ok ', 'a\u200bb'])
      assert.equal(checkExtend({ steps: 1, reason }, running(OPEN)), undefined, JSON.stringify(reason));
    assert.match(checkExtend({ steps: 1, reason: 'ok', operator: '\u200b' }, running(OPEN))!, /^operator must be/);
    assert.match(checkExtend({ steps: 1, reason: 'ok', operator: 'eve\r' }, running(OPEN))!, /^operator must be/);
    assert.equal(checkExtend({ steps: 1, reason: 'ok', operator: 'alice' }, running(OPEN)), undefined);
  });

  it('in dollars, are at least a billionth: budgets keep nine decimals, so less could round a sum down', () => {
    const odd = resolveBudget({ max_usd: 1.4e-9 });
    assert.match(checkExtend({ usd: 1e-12, reason: 'x' }, running(odd))!, /usd must be at least 0.000000001/);
    assert.ok(extendedBudget(odd, [{ usd: 1e-9, reason: 'x' }]).max_usd > odd.max_usd);
  });

  it('a top-up that names no dollars leaves a finer dollar budget as it was', () => {
    const fine = resolveBudget({ max_usd: 1.4e-9 });
    assert.equal(extendedBudget(fine, [{ steps: 1, reason: 'x' }]).max_usd, 1.4e-9);
  });

  it('add up on top of the operator budget', () => {
    const base = resolveBudget({ max_usd: 1, max_steps: 2 });
    const b = extendedBudget(base, [
      { usd: 0.5, steps: 5, reason: 'a' },
      { usd: 0.25, seconds: 120, tool_calls: 1, reason: 'b' },
    ]);
    assert.deepEqual(b, { ...base, max_usd: 1.75, max_steps: 7, max_seconds: 180, max_tool_calls: 7 });
  });
});

// Generated: budgets with and without dollar and token limits, and requests mixing plausible
// top-ups with hostile values in every field.
const budgetArb: fc.Arbitrary<Budget> = fc.record({
  max_steps: fc.integer({ min: 1, max: 10_000 }),
  max_tool_calls: fc.integer({ min: 0, max: 10_000 }),
  max_seconds: fc.integer({ min: 1, max: 86_400 }),
  max_tokens: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10_000_000 })),
  max_usd: fc.oneof(
    fc.constant(0),
    fc.double({ min: 1e-12, max: 100_000, noNaN: true }),
    fc.integer({ min: 1, max: 1000 }).map((c) => c / 100),
  ),
});

const hostileValue = fc.oneof(
  fc.constantFrom(null, true, '1', '', [], {}, NaN, Infinity, -Infinity, -0, -1, 1e308, Number.MIN_VALUE, 2 ** 53),
  fc.double(),
  fc.string({ maxLength: 5 }),
);
const amountArb = (max: number, whole: boolean) =>
  fc.oneof(
    { weight: 6, arbitrary: whole ? fc.integer({ min: 0, max }) : fc.double({ min: 0, max, noNaN: true }) },
    { weight: 1, arbitrary: fc.constantFrom(0, 1e-12, 1e-9, max, max + 1) },
    { weight: 1, arbitrary: hostileValue },
  );
const reasonArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('VIP customer', 'ok', '退款') },
  { weight: 2, arbitrary: fc.constantFrom(...INVISIBLE) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.nat({ max: 2 * EXTEND_LIMITS.reason_chars }).map((n) => 'r'.repeat(n)) },
  { weight: 1, arbitrary: hostileValue },
);
const plausibleArb = fc.record(
  {
    usd: fc.oneof(fc.double({ min: 0, max: EXTEND_LIMITS.usd, noNaN: true }), fc.constantFrom(0.01, 0.5, 1e-9)),
    steps: fc.integer({ min: 0, max: EXTEND_LIMITS.steps }),
    tool_calls: fc.integer({ min: 0, max: EXTEND_LIMITS.tool_calls }),
    seconds: fc.integer({ min: 0, max: EXTEND_LIMITS.seconds }),
    tokens: fc.integer({ min: 0, max: EXTEND_LIMITS.tokens }),
    reason: fc.constantFrom('VIP customer', 'ok', '退款'),
    operator: fc.constantFrom('alice', 'bob@example.com'),
  },
  { requiredKeys: ['reason'] },
);
const hostileArb = fc.record(
  {
    usd: amountArb(EXTEND_LIMITS.usd, false),
    steps: amountArb(EXTEND_LIMITS.steps, true),
    tool_calls: amountArb(EXTEND_LIMITS.tool_calls, true),
    seconds: amountArb(EXTEND_LIMITS.seconds, true),
    tokens: amountArb(EXTEND_LIMITS.tokens, true),
    reason: reasonArb,
    operator: fc.oneof(fc.constant('alice'), fc.string({ unit: 'binary', maxLength: 120 })),
    max_usd: fc.constant(0),
  },
  { requiredKeys: [] },
);
const requestArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: plausibleArb },
  { weight: 4, arbitrary: hostileArb },
  { weight: 1, arbitrary: fc.anything() },
);

const FIELDS = [
  ['usd', 'max_usd'],
  ['steps', 'max_steps'],
  ['tool_calls', 'max_tool_calls'],
  ['seconds', 'max_seconds'],
  ['tokens', 'max_tokens'],
] as const;

describe('top-ups, generated (fast-check)', () => {
  it('no accepted top-up lowers a budget, adds a dimension, or changes a budget it did not name', () => {
    let accepted = 0;
    fc.assert(
      fc.property(budgetArb, fc.array(requestArb, { maxLength: 8 }), (base, requests) => {
        const granted: ExtendRequest[] = [];
        let budget = base;
        for (const request of requests) {
          if (checkExtend(request, running(budget, { granted: granted.length })) !== undefined) continue;
          accepted++;
          const r = request as ExtendRequest;
          granted.push(r);
          const next = extendedBudget(base, granted);
          for (const [key, field] of FIELDS) {
            const named = (r[key] ?? 0) > 0;
            if (base[field] === 0 && (field === 'max_usd' || field === 'max_tokens'))
              assert.equal(next[field], 0, `${field}: a top-up set a limit where the run had none`);
            else if (named)
              assert.ok(next[field] > budget[field], `${field} did not grow: ${budget[field]} -> ${next[field]}`);
            else assert.equal(next[field], budget[field], `${field} changed without being named`);
          }
          assert.ok(typeof r.reason === 'string' && hasVisibleText(r.reason));
          budget = next;
        }
      }),
      { numRuns: 2000 },
    );
    // The property is about accepted top-ups: make sure there were plenty (about 1,000 of some 8,000).
    assert.ok(accepted > 500, `only ${accepted} top-ups accepted`);
  });
});
