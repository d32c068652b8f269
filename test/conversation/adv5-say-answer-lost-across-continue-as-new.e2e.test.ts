// Adversary (docs/conversations.md, "A message sent as the run continues as new": a message is
// applied once, whichever run of the chain takes it). The customer's `say` is applied by run 1;
// its answer is lost on the way back (the connection stalls, then drops); meanwhile run 1 continues
// as new. The client's gRPC retry sends the same Update (same id) to the chain, where run 2 runs:
// run 2 must answer it as the repeat it is (one turn), not add the message again.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { final, message, policy } from '../../offline-model/scripted-replies';
import { createClient } from '../../client/connect';
import { sayToRun } from '../../client/conversation';
import { runResult } from '../../client/agent-client';
import { eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';

const PAUSE_MS = 5000;
const fixture = agentFixture({
  queue: 'adv5-say-lost',
  workerEnv: { AGENT_TOOL_PAUSE_MS: String(PAUSE_MS), AGENT_TOOL_PAUSE_TOOLS: 'search_policy' },
});

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

describe('adv5: a say whose answer is lost while the run continues as new', () => {
  it('the client retries the same Update on the chain: the message is one turn', async () => {
    const id = uniqueId('adv5-say-lost');
    const TEXT = 'Also, is my May invoice included?';
    // Steps 1 and 2: a slow policy search (an activity: no workflow task open meanwhile); each step
    // ends its run in continue-as-new. Step 3: the answer.
    const { handle } = await fixture.start(
      (req) =>
        req.step! <= 2
          ? policy(`policy question ${req.step}`)
          : JSON.stringify(req.body).includes(TEXT)
            ? final('Refundable. Bye.')
            : message('Anything else?'),
      {
        conversation: {},
        continue_as_new_every: 1,
        budget: { max_steps: 10, max_tool_calls: 10, max_seconds: 120, max_repeats: 0 },
      },
      { id },
    );
    const firstRun = handle.firstExecutionRunId;
    await eventually('the slow search under way in run 1', () =>
      /tool pause: search_policy/.test(fixture.worker.output()) ? true : undefined,
    );

    const proxy = await stallingProxy(fixture.env.address, TEXT);
    const operator = await createClient({ ...fixture.env, address: proxy.address });
    try {
      // The answer to the say Update (the request with TEXT in it) never comes back.
      const extended = sayToRun(operator, id, { text: TEXT }).then(
        (receipt) => ({ receipt }),
        (err: unknown) => ({ err }),
      );
      await eventually('the say Update sent', () => (proxy.held() ? true : undefined));
      // Run 1 applied it (its history has the Update completed), then continued as new.
      const run1 = fixture.client.workflow.getHandle(id, firstRun);
      await eventually('run 1 applied the message', async () =>
        ((await run1.fetchHistory()).events ?? []).some((e) => e.workflowExecutionUpdateCompletedEventAttributes)
          ? true
          : undefined,
      );
      await eventually('run 1 continued as new', async () =>
        (await fixture.client.workflow.getHandle(id).describe()).runId !== firstRun ? true : undefined,
      );
      // The answer never came: the connection drops, and the client's retry goes to the chain.
      proxy.drop();
      const outcome = await extended;
      console.log(
        `adv5 say-lost: the customer's call answered ${'receipt' in outcome ? JSON.stringify(outcome.receipt) : String(outcome.err)}`,
      );
      const result = await runResult(handle);
      const turns = (result.conversation?.turns ?? []).filter((t) => t.from === 'customer' && t.text === TEXT);
      console.log(
        `adv5 say-lost: result ${result.stop_reason}; the message is in the transcript ${turns.length} times`,
      );
      assert.equal(turns.length, 1, 'one say sent: one turn');
      assert.equal(result.conversation?.customer_messages, 1);
      assert.ok('receipt' in outcome, `the customer's say failed: ${'err' in outcome ? String(outcome.err) : ''}`);
      assert.equal(outcome.receipt.n, turns[0]!.n, 'the receipt names the turn');
      assert.equal(result.stop_reason, 'success');
    } finally {
      await operator.connection.close();
      await proxy.close();
    }
  });
});
