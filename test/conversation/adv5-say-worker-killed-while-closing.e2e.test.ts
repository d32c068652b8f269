// Adversary (docs/conversations.md, "A message sent as the run continues as new": taken by the
// chain, applied exactly once). `agent say` is sent while the workflow task that ends in
// continue-as-new runs a slow local read, and the worker running it is SIGKILLed. A new worker
// redoes the task (after the workflow task timeout) and the chain goes on: the customer's message
// must be one turn, and the CLI must either confirm it or say in one line that it was not taken
// in time; never confirm nothing while the message is then taken (the customer would send it again).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { billing, final, message } from '../../offline-model/scripted-replies';
import type { RecordedRequest } from '../../offline-model/scripted-llm-server';
import { runResult } from '../../client/agent-client';
import { eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

const fixture = agentFixture({ queue: 'adv5-kill-closing', worker: false });

/** A TCP proxy that notes when a request carrying `marker` first passed to the server. */
async function markerProxy(upstream: string, marker: string) {
  const sep = upstream.lastIndexOf(':');
  const target = { host: upstream.slice(0, sep), port: Number(upstream.slice(sep + 1)) };
  let sentAt: number | undefined;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const remote = net.connect(target);
    for (const s of [client, remote]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s)).on('error', () => s.destroy());
    }
    client.on('data', (d: Buffer) => {
      if (sentAt === undefined && d.includes(marker)) sentAt = Date.now();
    });
    client.pipe(remote).pipe(client);
    client.once('close', () => remote.destroy());
    remote.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    sentAt: () => sentAt,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('adv5: agent say while the worker running the continue-as-new task is killed', () => {
  it('the message is one turn, and the CLI says what happened', async () => {
    const first = fixture.startWorker({ AGENT_TOOL_PAUSE_MS: '60000', AGENT_TOOL_PAUSE_TOOLS: 'get_user_billing' });
    await first.ready;
    const id = uniqueId('adv5-kill-closing');
    const TEXT = 'adv5 message as the worker dies';
    const script = (req: RecordedRequest) =>
      req.step === 1
        ? billing()
        : JSON.stringify(req.body).includes(TEXT)
          ? final('Done. Bye.')
          : message('Anything else?');
    const { handle } = await fixture.start(
      script,
      { conversation: {}, continue_as_new_every: 1, budget: { max_steps: 10, max_seconds: 120, max_repeats: 0 } },
      { id },
    );
    await eventually('the slow read under way', () =>
      new RegExp(`tool pause: get_user_billing.*${id}|${id}.*tool pause: get_user_billing`).test(first.output())
        ? true
        : undefined,
    );
    const proxy = await markerProxy(fixture.env.address, TEXT);
    try {
      const started = Date.now();
      const said = runCli({ ...fixture.env, address: proxy.address }, ['say', id, TEXT]).then((out) => ({
        out,
        ms: Date.now() - started,
      }));
      await eventually('the say sent', () => (proxy.sentAt() !== undefined ? true : undefined));
      await first.kill();
      const second = fixture.startWorker();
      await second.ready;
      const { out, ms } = await said;
      const result = await runResult(handle);
      const turns = (result.conversation?.turns ?? []).filter((t) => t.from === 'customer' && t.text === TEXT);
      console.log(
        `adv5 kill-closing: say exit ${out.code} after ${ms} ms: ${JSON.stringify(out.stderr || out.stdout)}; result ${result.stop_reason}; ${turns.length} turn(s)`,
      );
      assert.equal(turns.length, 1, 'the message is one turn');
      assert.equal(out.code, 0, `the CLI said it was not taken, and it was: ${out.stderr}`);
      assert.match(out.stdout, new RegExp(`^said \\(turn ${turns[0]!.n}\\) in ${id}`));
    } finally {
      await proxy.close();
    }
  });
});
