// The inbox's pure parts: `--waiting` kinds (hostile values refused in one line that lists the
// kinds, never echoed raw), the visibility query, and the command each wait kind answers with.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import {
  nextCommand,
  parseWaitingKinds,
  PERSON_WAIT_KINDS,
  WAIT_KINDS,
  waitingQuery,
} from '../../common/temporal/waiting';
import { OPTIONAL_SEARCH_ATTRIBUTES, devServerSearchAttributeFlags } from '../../common/temporal/search-attributes';

describe('agent list --waiting kinds', () => {
  it('no kind means every kind a person answers', () => {
    assert.deepEqual(parseWaitingKinds(undefined), { ok: true, kinds: [...PERSON_WAIT_KINDS] });
    assert.ok(!PERSON_WAIT_KINDS.includes('none'));
    assert.equal(
      waitingQuery(PERSON_WAIT_KINDS),
      'AgentWaiting IN ("approval", "escalation", "customer", "consent", "topup")',
    );
  });

  it('a list of kinds, deduplicated, case-insensitive', () => {
    assert.deepEqual(parseWaitingKinds('Approval, topup,approval'), { ok: true, kinds: ['approval', 'topup'] });
    assert.equal(waitingQuery(['consent']), 'AgentWaiting = "consent"');
  });

  it('a hostile kind is one line naming the kinds, and never reaches a query', () => {
    for (const raw of ['approval" OR AgentStatus="ok', 'x\n\x1b[2Jboom', 'a'.repeat(5000), 'none;DROP']) {
      const parsed = parseWaitingKinds(raw);
      assert.equal(parsed.ok, false);
      if (parsed.ok) continue;
      assert.ok(!parsed.error.includes('\n') && !parsed.error.includes('\x1b'), parsed.error);
      assert.ok(parsed.error.length < 200, parsed.error);
      assert.match(parsed.error, /approval, escalation, customer, consent, topup, none$/);
    }
  });

  it('whatever the input, it is refused or yields only known kinds', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (raw) => {
        const parsed = parseWaitingKinds(raw);
        if (!parsed.ok) return ![...parsed.error].some((c) => c < ' ');
        return parsed.kinds.every((k) => (WAIT_KINDS as readonly string[]).includes(k));
      }),
    );
  });
});

describe('the next command of each wait kind', () => {
  it('names the CLI command that answers it', () => {
    assert.equal(nextCommand('approval', 'r1'), 'agent approve r1 | agent reject r1');
    assert.equal(nextCommand('escalation', 'r1'), 'agent answer r1 TEXT');
    assert.equal(nextCommand('customer', 'r1'), 'agent say r1 TEXT');
    assert.equal(nextCommand('consent', 'r1'), 'agent say r1 yes');
    assert.equal(nextCommand('topup', 'r1'), 'agent extend r1 --reason TEXT');
    assert.equal(nextCommand('none', 'r1'), '-');
  });

  it('AgentWaiting is registered by the dev server and optional', () => {
    assert.ok(devServerSearchAttributeFlags().includes('AgentWaiting=Keyword'));
    assert.ok(OPTIONAL_SEARCH_ATTRIBUTES.has('AgentWaiting'));
  });
});
