// How a decision counts its model requests across Temporal attempts (common/cost/llm-requests.ts): the
// attempts a hung worker swallows (handed to its open polls, never run) do not use up
// llm_max_attempts, an attempt that sent and then died does, and the last request's failure is final.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { requestTurn, sentBefore } from '../../common/cost/llm-requests';
import { decideMaxAttempts } from '../../workflows/calls/decide-options';

/** What one Temporal attempt meets: a hung worker's poll, a dead worker after sending, an error answer, an answer. */
type Outcome = 'lost' | 'died' | 'error' | 'answer';

interface Decision {
  end: 'answer' | 'final failure' | 'spent' | 'attempts exhausted';
  requests: number;
  attempts: number;
}

/**
 * The decide activity's counting, attempt by attempt, with the heartbeat details carried the way
 * Temporal carries them: the last ones recorded, kept across attempts that never heartbeat.
 */
function decide(outcomes: readonly Outcome[], maxRequests: number): Decision {
  let details: unknown = undefined;
  let requests = 0;
  const maxAttempts = decideMaxAttempts(maxRequests);
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const outcome = outcomes[attempt - 1] ?? 'answer';
    if (outcome === 'lost') continue; // never ran: no heartbeat, the details stay as they were
    const sent = sentBefore(details, attempt);
    const turn = requestTurn(sent, maxRequests);
    if (turn === 'spent') return { end: 'spent', requests, attempts: attempt };
    details = { attempts: [], sent: [...sent, attempt] }; // heartbeated before sending
    requests++;
    if (outcome === 'answer') return { end: 'answer', requests, attempts: attempt };
    if (outcome === 'error' && turn === 'last') return { end: 'final failure', requests, attempts: attempt };
  }
  return { end: 'attempts exhausted', requests, attempts: maxAttempts };
}

const outcome = fc.constantFrom<Outcome>('lost', 'died', 'error', 'answer');

describe('counting a decision’s model requests', () => {
  it('never sends more than llm_max_attempts requests, and ends for that only after sending them all', () => {
    fc.assert(
      fc.property(fc.array(outcome, { maxLength: 40 }), fc.integer({ min: 1, max: 20 }), (outcomes, max) => {
        const d = decide(outcomes, max);
        assert.ok(d.requests <= max, `${d.requests} requests of ${max}`);
        if (d.end === 'final failure' || d.end === 'spent') assert.equal(d.requests, max);
      }),
    );
  });

  it('retries lost to a hung worker’s polls (up to 10) cost no request: the decision ends as if they never happened', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<Outcome>('died', 'error', 'answer'), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        fc.integer({ min: 1, max: 20 }),
        (real, lostAt, max) => {
          const withLost: Outcome[] = [...real];
          for (const at of lostAt) withLost.splice(at % (withLost.length + 1), 0, 'lost');
          // Out of Temporal attempts with every request made, or spent: both end as the last one's timeout.
          const end = (d: Decision) => (d.end === 'attempts exhausted' && d.requests === max ? 'spent' : d.end);
          const a = decide(real, max);
          const b = decide(withLost, max);
          assert.deepEqual([end(b), b.requests], [end(a), a.requests]);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('today’s failing case: a request in flight on a worker that stops, then retries on its open polls', () => {
    // llm_max_attempts 3: before, Temporal's 3 attempts were spent by the stop (llm_timeout).
    assert.deepEqual(decide(['died', 'lost', 'lost', 'answer'], 3), { end: 'answer', requests: 2, attempts: 4 });
    // The requests are the limit: three that died are all there is.
    assert.deepEqual(decide(['died', 'lost', 'died', 'died', 'answer'], 3), { end: 'spent', requests: 3, attempts: 5 });
    assert.deepEqual(decide(['error', 'lost', 'error', 'error'], 3), {
      end: 'final failure',
      requests: 3,
      attempts: 4,
    });
  });

  it('reads only earlier attempts from the details, whatever else they hold', () => {
    assert.deepEqual(sentBefore({ sent: [3, 1, 1, 5, 0, -2, 1.5, '2', null] }, 4), [1, 3]);
    for (const junk of [undefined, null, 7, 'x', [], { sent: 'x' }, { sent: {} }])
      assert.deepEqual(sentBefore(junk, 9), []);
    fc.assert(
      fc.property(fc.anything(), fc.integer({ min: 1, max: 30 }), (details, attempt) => {
        const sent = sentBefore(details, attempt);
        assert.ok(sent.every((a) => Number.isSafeInteger(a) && a >= 1 && a < attempt));
        assert.equal(new Set(sent).size, sent.length);
      }),
    );
  });

  it('without a count (a run recorded before it) every attempt sends', () => {
    assert.equal(requestTurn([1, 2, 3, 4], undefined), 'send');
    assert.equal(requestTurn([], 1), 'last');
    assert.equal(requestTurn([1], 1), 'spent');
  });
});
