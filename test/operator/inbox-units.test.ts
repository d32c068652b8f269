// The inbox's pure parts: `--waiting` kinds (hostile values refused in one line that lists the
// kinds, never echoed raw), the visibility query, the command each wait kind answers with, and the
// worker's agent_runs_waiting gauge over a stand-in for the visibility store's counts.
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
import { waitingCountQuery, waitingCounts } from '../../worker/waiting-gauge';
import { createAgentMetrics } from '../../worker/metrics';

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

describe('the agent_runs_waiting gauge', () => {
  it('counts open runs of each kind a person answers, once per cache period whatever the scrapes', async () => {
    const queries: string[] = [];
    let nowMs = 0;
    const counts = waitingCounts(
      async (query) => {
        queries.push(query);
        return queries.length;
      },
      1_000,
      () => nowMs,
    );
    const first = await counts();
    assert.deepEqual([...first!.keys()], [...PERSON_WAIT_KINDS]);
    assert.deepEqual(queries, PERSON_WAIT_KINDS.map(waitingCountQuery));
    assert.equal(
      waitingCountQuery('consent'),
      `WorkflowType = 'reactAgent' AND ExecutionStatus = 'Running' AND AgentWaiting = "consent"`,
    );
    nowMs = 999;
    assert.equal(await counts(), first, 'served from the cache');
    assert.equal(queries.length, PERSON_WAIT_KINDS.length);
    nowMs = 1_000;
    await counts();
    assert.equal(queries.length, 2 * PERSON_WAIT_KINDS.length);
  });

  it('on the registry: a sample per kind; none at all when the server cannot count (never a false zero)', async () => {
    const counted = createAgentMetrics({
      defaultMetrics: false,
      countRuns: async (q) => (q.includes('"topup"') ? 2 : 0),
    });
    const text = await counted.registry().metrics();
    assert.match(text, /^agent_runs_waiting\{kind="topup"\} 2$/m);
    assert.match(text, /^agent_runs_waiting\{kind="approval"\} 0$/m);
    const failing = createAgentMetrics({
      defaultMetrics: false,
      countRuns: async () => {
        throw new Error('AgentWaiting is not a search attribute here');
      },
    });
    assert.doesNotMatch(await failing.registry().metrics(), /^agent_runs_waiting\{/m);
    assert.doesNotMatch(await createAgentMetrics({ defaultMetrics: false }).registry().metrics(), /agent_runs_waiting/);
  });
});
