// Broke 2026-12-07 (adversary round): one `extend`, two top-ups (extensions: 2, max_steps 10 -> 20).
// Fixed by pinning extend to its run; since the same day extend addresses the chain again and every
// top-up carries its Update id across continue-as-new: run 2 answers the repeat (`duplicate`).
// Adversary (docs/conversations.md, "A message sent as the run continues as new": `say` and `agent
// extend` address the chain, not one run, and a message is applied once whichever run takes it).
// An operator's `extend` is applied by run 1; its answer is lost on the way back (the connection
// stalls, then drops); meanwhile run 1 continues as new. The client's gRPC retry sends the same
// Update (same id) to the chain again, where run 2 now runs: the top-up must not be granted twice.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { final, policy } from '../../offline-model/scripted-replies';
import { createClient } from '../../client/connect';
import { extendRun } from '../../client/extend-run';
import { runResult } from '../../client/agent-client';
import { eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';

const PAUSE_MS = 5000;
const fixture = agentFixture({
  queue: 'adv5-extend',
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

describe('adv5: an extend whose answer is lost while the run continues as new', () => {
  it('the client retries the same Update on the chain: the top-up is granted once', async () => {
    const id = uniqueId('adv5-extend');
    // Steps 1 and 2: a slow policy search (an activity: no workflow task open meanwhile); each step
    // ends its run in continue-as-new. Step 3: the answer.
    const { handle } = await fixture.start(
      (req) => (req.step === 3 ? final('Refundable.') : policy(`policy question ${req.step}`)),
      { continue_as_new_every: 1, budget: { max_steps: 10, max_tool_calls: 10, max_seconds: 120, max_repeats: 0 } },
      { id },
    );
    const firstRun = handle.firstExecutionRunId;
    await eventually('the slow search under way in run 1', () =>
      /tool pause: search_policy/.test(fixture.worker.output()) ? true : undefined,
    );

    const REASON = 'adv5: one top-up';
    const proxy = await stallingProxy(fixture.env.address, REASON);
    const operator = await createClient({ ...fixture.env, address: proxy.address });
    try {
      // The answer to the extend Update (the request with REASON in it) never comes back.
      const extended = extendRun(operator, id, { steps: 5, reason: REASON }).then(
        (receipt) => ({ receipt }),
        (err: unknown) => ({ err }),
      );
      await eventually('the extend Update sent', () => (proxy.held() ? true : undefined));
      // Run 1 applied it (its history has the Update completed), then continued as new.
      const run1 = fixture.client.workflow.getHandle(id, firstRun);
      await eventually('run 1 applied the top-up', async () =>
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
        `adv5 extend: the operator's call answered ${'receipt' in outcome ? JSON.stringify(outcome.receipt) : String(outcome.err)}`,
      );
      const result = await runResult(handle);
      console.log(`adv5 extend: result ${result.stop_reason}; extensions ${JSON.stringify(result.extensions)}`);
      assert.equal(result.extensions?.length ?? 0, 1, 'one extend sent: one top-up granted');
      assert.ok('receipt' in outcome, `the operator's extend failed: ${'err' in outcome ? String(outcome.err) : ''}`);
      assert.equal(outcome.receipt.extensions, 1, 'the receipt counts one top-up');
    } finally {
      await operator.connection.close();
      await proxy.close();
    }
  });
});
