// BREAKS on 2026-12-07 code: the message is two turns (2 and 48); the receipt says turn 48, not a repeat.
// The chain remembers only the last 20 say Update ids (CONVERSATION_LIMITS.remembered_updates).
// Adversary (docs/conversations.md: a message sent as the run continues as new is applied exactly
// once; a run remembers the say Updates the chain applied, and answers a repeat as a repeat). The
// customer's `say` is applied; its answer is lost on the way back (the connection stalls); the
// conversation goes on, and continues as new after every step, while the customer's other device
// sends more than 20 messages. When the stalled connection drops, the client's gRPC retry sends the
// first Update (same id) again, to the chain: it must not become a second turn.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { final, message } from '../../offline-model/scripted-replies';
import { createClient } from '../../client/connect';
import { sayToRun } from '../../client/conversation';
import { runResult } from '../../client/agent-client';
import { eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';

const fixture = agentFixture({ queue: 'adv5-say-lost-many' });
const OTHERS = 22;

/**
 * A TCP proxy that, once a request carrying `marker` passes (the first time only), drops the
 * server's answers (the client hears nothing) until drop() cuts every connection.
 */
async function stallingProxy(upstream: string, marker: string) {
  const sep = upstream.lastIndexOf(':');
  const target = { host: upstream.slice(0, sep), port: Number(upstream.slice(sep + 1)) };
  const pairs = new Set<{ client: net.Socket; remote: net.Socket }>();
  let holding = false;
  let held = false;
  const server = net.createServer((client) => {
    const remote = net.connect(target);
    const pair = { client, remote };
    pairs.add(pair);
    client.on('data', (d: Buffer) => {
      if (!held && d.includes(marker)) holding = held = true;
      remote.write(d);
    });
    remote.on('data', (d: Buffer) => {
      if (!holding) client.write(d);
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      remote.destroy();
    };
    client.on('close', end).on('error', end);
    remote.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => held,
    /** Every connection dropped; new ones pass again. */
    drop: () => {
      holding = false;
      for (const { client, remote } of pairs) {
        client.destroy();
        remote.destroy();
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('adv5: a say whose answer is lost while more than 20 other messages go through', () => {
  it('the retried Update is answered as a repeat: the message is one turn', async () => {
    const id = uniqueId('adv5-say-lost-many');
    const TEXT = 'Is my May invoice included?';
    const LAST = 'That is all.';
    const { handle } = await fixture.start(
      (req) => (JSON.stringify(req.body).includes(LAST) ? final('Bye.') : message('Noted. Anything else?')),
      {
        conversation: {},
        continue_as_new_every: 1,
        budget: { max_steps: 200, max_tool_calls: 10, max_seconds: 240, max_repeats: 0 },
      },
      { id },
    );
    await eventually('the first question', () => (fixture.llm.requests(id).length >= 1 ? true : undefined));
    const proxy = await stallingProxy(fixture.env.address, TEXT);
    const phone = await createClient({ ...fixture.env, address: proxy.address });
    try {
      const first = sayToRun(phone, id, { text: TEXT }).then(
        (receipt) => ({ receipt }),
        (err: unknown) => ({ err }),
      );
      await eventually('the say Update sent', () => (proxy.held() ? true : undefined));
      await eventually('the model read it', () =>
        fixture.llm.requests(id).some((r) => JSON.stringify(r.body).includes(TEXT)) ? true : undefined,
      );
      // The other device: one message at a time, each answered before the next.
      for (let i = 0; i < OTHERS; i++) {
        const decided = fixture.llm.requests(id).length;
        await sayToRun(fixture.client, id, { text: `other message ${i}` });
        await eventually(`the answer to other message ${i}`, () =>
          fixture.llm.requests(id).length > decided ? true : undefined,
        );
      }
      proxy.drop();
      const outcome = await first;
      console.log(
        `adv5 say-lost-many: the first say answered ${'receipt' in outcome ? JSON.stringify(outcome.receipt) : String(outcome.err)}`,
      );
      await sayToRun(fixture.client, id, { text: LAST });
      const result = await runResult(handle);
      const turns = (result.conversation?.turns ?? []).filter((t) => t.from === 'customer' && t.text === TEXT);
      console.log(
        `adv5 say-lost-many: result ${result.stop_reason}; the message is in the transcript ${turns.length} times (turns ${turns.map((t) => t.n).join(', ')})`,
      );
      assert.equal(turns.length, 1, 'one say sent: one turn');
      assert.equal(result.conversation?.customer_messages, OTHERS + 2);
      assert.ok('receipt' in outcome, `the first say failed: ${'err' in outcome ? String(outcome.err) : ''}`);
      assert.equal(outcome.receipt.n, turns[0]!.n, 'the receipt names the turn');
    } finally {
      await phone.connection.close();
      await proxy.close();
    }
  });
});
