// `agent chat`'s typed-ahead lines (cli/chat-input.ts): any stream of customer lines and agent
// turns gives consent only from a line entered after the question was shown (issue 29 item 3).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ChatLines, END_COMMAND } from '../../cli/chat-input';
import type { CustomerWait } from '../../cli/chat-input';

type Event = { kind: 'type'; text: string } | { kind: 'agent'; consent: boolean } | { kind: 'wait' };

describe("agent chat's typed-ahead lines", () => {
  it('the reported case: a yes piped after the first message never answers the question asked later', () => {
    const lines = new ChatLines();
    lines.push('Hi, my email is ivan.santos3158@example.com. What is the status of my orders?', 0);
    lines.push('yes', 0);
    assert.deepEqual(lines.next({}), {
      send: { text: 'Hi, my email is ivan.santos3158@example.com. What is the status of my orders?', shown: 0 },
    });
    assert.deepEqual(lines.next({ question: 3 }), { dropped: { text: 'yes', shown: 0 } });
    assert.equal(lines.next({ question: 3 }), undefined);
  });

  it('a line entered after the question answers it; /end goes out at any wait', () => {
    const lines = new ChatLines();
    lines.push(END_COMMAND, 1);
    lines.push('yes', 3);
    assert.deepEqual(lines.next({ question: 3 }), { send: { text: END_COMMAND, shown: 1 } });
    assert.deepEqual(lines.next({ question: 3 }), { send: { text: 'yes', shown: 3 } });
  });

  it('any stream of lines and turns: only lines entered after the question are sent at it, in order, none lost', () => {
    const event: fc.Arbitrary<Event> = fc.oneof(
      fc.record({
        kind: fc.constant('type' as const),
        text: fc.constantFrom('yes', 'y', 'no', 'hi', 'confirm', END_COMMAND),
      }),
      fc.record({ kind: fc.constant('agent' as const), consent: fc.boolean() }),
      fc.constant({ kind: 'wait' as const }),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 60 }), (events) => {
        const lines = new ChatLines();
        let shown = 0; // the last turn the chat has shown
        let wait: CustomerWait | undefined; // the run's current wait for the customer
        const typed: Array<{ text: string; shown: number }> = [];
        const out: Array<{ text: string; shown: number }> = [];
        for (const e of events) {
          if (e.kind === 'type') {
            lines.push(e.text, shown);
            typed.push({ text: e.text, shown });
          } else if (e.kind === 'agent') {
            shown += 1;
            wait = e.consent ? { question: shown } : {};
          } else if (wait) {
            const next = lines.next(wait);
            if (next === undefined) continue;
            const line = 'send' in next ? next.send : next.dropped;
            out.push(line);
            if ('send' in next) {
              // Consent only from a line entered after the question was shown (or leaving).
              if (wait.question !== undefined)
                assert.ok(line.shown >= wait.question || line.text === END_COMMAND, JSON.stringify({ line, wait }));
              shown += 1; // the customer's turn
              wait = undefined;
            } else assert.ok(wait.question !== undefined && line.shown < wait.question && line.text !== END_COMMAND);
          }
        }
        // Every line is sent or dropped, once, in the order typed.
        assert.deepEqual(out, typed.slice(0, out.length));
      }),
      { numRuns: 3000 },
    );
  });
});
