// A conversation's current details in the Web UI (workflows/reporting/run-details.ts): the turns in order,
// what the run waits for, a consent question, escaping, and the size bound.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EMPTY_TRANSCRIPT, withTurn } from '../../common/conversation/conversation';
import type { Transcript, Turn } from '../../common/conversation/conversation';
import { conversationDetails, escapeMarkdown, TURN_DETAILS_LIMITS } from '../../workflows/reporting/run-details';
import { CONSENT_LIMITS, unshowable } from '../../common/conversation/consent';

const NOW = Date.parse('2026-12-03T20:00:00Z');
const HEAD = "step 3 of 8: awaiting the customer's next message";

function transcriptOf(turns: Array<Omit<Turn, 'n'>>): Transcript {
  return turns.reduce(withTurn, EMPTY_TRANSCRIPT);
}

function details(t: Transcript, awaitingUntilMs?: number): string {
  return conversationDetails(HEAD, { transcript: t, workflowId: 'chat-1', awaitingUntilMs, nowMs: NOW });
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe("a conversation's current details", () => {
  it('the head, the counts, what the run waits for, then the turns oldest first', () => {
    const t = transcriptOf([
      { from: 'agent', text: 'Hello', step: 1 },
      { from: 'customer', text: 'Hi', step: 1 },
      { from: 'agent', text: 'Done', step: 3 },
    ]);
    assert.equal(
      details(t, NOW + 15 * 60_000),
      [
        HEAD,
        "**conversation** · 3 turn(s): 2 from the agent, 1 from the customer · awaiting the customer's reply until 20:15 UTC — reply with: agent say chat\\-1 TEXT",
        '**agent:** Hello',
        '**customer:** Hi',
        '**agent:** Done',
      ].join('\n\n'),
    );
    assert.match(details(t, NOW + 2 * 86_400_000), /until 2026-12-05 20:00 UTC/);
    assert.doesNotMatch(details(t).slice(HEAD.length), /awaiting/, 'not waiting: no wait shown');
    const first = conversationDetails('', {
      transcript: t,
      workflowId: 'chat-1',
      awaitingUntilMs: undefined,
      nowMs: NOW,
    });
    assert.ok(first.startsWith('**conversation** · 3 turn(s)'), 'a turn before any phase line: no empty line first');
  });

  it("a customer's unanswered message, a consent question and the customer's end", () => {
    const asked = transcriptOf([
      {
        from: 'agent',
        text: 'To go ahead ...',
        step: 2,
        consent: { tool: 'cancel_pending_order', args: { order_id: '#W1' } },
      },
      { from: 'customer', text: 'yes', step: 2 },
    ]);
    const shown = details(asked, NOW + 60_000);
    assert.ok(shown.includes("1 customer message(s) wait for the agent's reply"), shown);
    assert.ok(!shown.slice(HEAD.length).includes('awaiting'), 'a reply that arrived is not awaited');
    assert.ok(
      shown.includes('**agent:** _asks to confirm:_ cancel\\_pending\\_order \\{"order\\_id"\\:"\\#W1"\\}'),
      shown,
    );
    // While the question waits, it comes first (the Web UI shows only the top of the details), whole,
    // with how to answer it; the wait line says until when.
    const waiting = details(transcriptOf([asked.turns[0]!]), NOW + 60_000);
    const [first, second, third] = waiting.split('\n\n');
    assert.equal(
      first,
      '**awaiting the customer\'s consent:** cancel\\_pending\\_order \\{"order\\_id"\\:"\\#W1"\\} — reply with: agent say chat\\-1 yes (anything else declines)',
    );
    assert.equal(second, HEAD);
    assert.ok(third?.endsWith("· awaiting the customer's consent (above) until 20:01 UTC"), third);
    assert.ok(!shown.includes("awaiting the customer's consent"), 'an answered question is not awaited');
    const ended = withTurn(asked, { from: 'customer', text: 'bye', step: 2, end: true });
    assert.match(details(ended), /the customer ended the conversation/);
    assert.ok(details(ended).endsWith('**customer:** bye _(ended the conversation)_'));
  });

  it('escapes markdown and HTML, keeps each turn on one line and bounded', () => {
    assert.equal(
      escapeMarkdown('*a* _b_ <i>c</i> [d](e) # `f`'),
      '\\*a\\* \\_b\\_ \\<i\\>c\\</i\\> \\[d\\]\\(e\\) \\# \\`f\\`',
    );
    const long = 'x'.repeat(1000);
    const t = transcriptOf([{ from: 'customer', text: `line one\n\n# line two ${long}`, step: 1 }]);
    const line = details(t).split('\n\n').at(-1)!;
    assert.ok(line.startsWith('**customer:** line one \\# line two xxx'), line);
    assert.equal(
      Array.from(line.replace('**customer:** ', '').replace(/\\/g, '')).length,
      TURN_DETAILS_LIMITS.turn_chars,
    );
    assert.ok(line.endsWith('…'));
  });

  it('a consent question is shown whole, however long its action, among long turns (no per-argument cut)', () => {
    const address1 = `12 Oak Street Apt 4 ${'日'.repeat(CONSENT_LIMITS.args_chars - 60)}`;
    const consent = { tool: 'modify_user_address', args: { user_id: 'u1', address1 } };
    assert.equal(unshowable(consent), undefined);
    const long = (i: number) => ({ from: 'customer' as const, text: `${i} ${'x'.repeat(1000)}`, step: 1 });
    const t = transcriptOf([
      ...Array.from({ length: 8 }, (_, i) => long(i)),
      { from: 'agent', text: 'q', step: 2, consent },
    ]);
    const shown = details(t, NOW + 60_000);
    assert.ok(bytes(shown) <= TURN_DETAILS_LIMITS.total_bytes);
    const action = escapeMarkdown(`modify_user_address ${JSON.stringify(consent.args)}`);
    assert.ok(shown.startsWith(`**awaiting the customer's consent:** ${action} — reply with`), shown);
  });

  it('the last 10 turns at most, within 4 KB: older turns give way and are counted', () => {
    const many = transcriptOf(
      Array.from(
        { length: 25 },
        (_, i) => ({ from: i % 2 ? 'customer' : 'agent', text: `turn ${i + 1}`, step: i }) as const,
      ),
    );
    const shown = details(many).split('\n\n');
    assert.equal(shown[2], '_15 earlier turn(s) not shown_');
    assert.deepEqual(
      shown.slice(3).map((l) => l.replace(/^\*\*\w+:\*\* /, '')),
      Array.from({ length: 10 }, (_, i) => `turn ${i + 16}`),
    );

    // Ten turns of 4-byte characters, each at the bound: 12 KB of text, cut to the newest that fit.
    const wide = transcriptOf(
      Array.from({ length: 10 }, (_, i) => ({ from: 'customer', text: `${i}${'😀'.repeat(400)}`, step: 1 }) as const),
    );
    const bounded = details(wide);
    assert.ok(bytes(bounded) <= TURN_DETAILS_LIMITS.total_bytes, `${bytes(bounded)} bytes`);
    assert.match(bounded, /_\d earlier turn\(s\) not shown_/);
    assert.ok(bounded.includes('**customer:** 9😀'), 'the newest turn stays');
  });
});
