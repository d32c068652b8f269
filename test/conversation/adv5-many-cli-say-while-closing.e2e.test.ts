// Adversary (docs/conversations.md, "A message sent as the run continues as new": taken by the
// chain, applied exactly once). Four `agent say` processes at once, all sent while the workflow
// task that ends in continue-as-new is held open by a slow local read: each message is one turn,
// each CLI confirms it with its own turn number.
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

const fixture = agentFixture({
  queue: 'adv5-closing-many',
  workerEnv: { AGENT_TOOL_PAUSE_MS: '8000', AGENT_TOOL_PAUSE_TOOLS: 'get_user_billing' },
});

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

describe('adv5: four agent say processes during the slow task that ends in continue-as-new', () => {
  it('each message is one turn, confirmed with its own number', async () => {
    const id = uniqueId('adv5-closing-many');
    const texts = [0, 1, 2, 3].map((i) => `adv5 message ${i} as it closes`);
    const script = (req: RecordedRequest) =>
      req.step === 1
        ? billing()
        : texts.every((t) => JSON.stringify(req.body).includes(t))
          ? final('All noted. Bye.')
          : message('Anything else?');
    const { handle } = await fixture.start(
      script,
      { conversation: {}, continue_as_new_every: 1, budget: { max_steps: 20, max_seconds: 120, max_repeats: 0 } },
      { id },
    );
    await eventually('the slow read under way', () =>
      new RegExp(`tool pause: get_user_billing.*${id}|${id}.*tool pause: get_user_billing`).test(
        fixture.worker.output(),
      )
        ? true
        : undefined,
    );
    const proxies = await Promise.all(texts.map((t) => markerProxy(fixture.env.address, t)));
    try {
      const outs = await Promise.all(
        texts.map((t, i) => runCli({ ...fixture.env, address: proxies[i]!.address }, ['say', id, t, '-o', 'json'])),
      );
      const result = await runResult(handle);
      const run1 = await fixture.client.workflow.getHandle(id, handle.firstExecutionRunId).describe();
      const closedAt = run1.closeTime?.getTime() ?? Infinity;
      console.log(
        `adv5 closing-many: ${outs.map((o) => `exit ${o.code} ${(o.stdout || o.stderr).trim()}`).join(' | ')}; sent before run 1 closed: ${proxies.filter((p) => p.sentAt()! < closedAt).length}/4; ${result.stop_reason}`,
      );
      const numbers = new Set<number>();
      texts.forEach((t, i) => {
        assert.equal(outs[i]!.code, 0, outs[i]!.stderr);
        const n = (JSON.parse(outs[i]!.stdout) as { n: number }).n;
        numbers.add(n);
        const turns = (result.conversation?.turns ?? []).filter((turn) => turn.from === 'customer' && turn.text === t);
        assert.deepEqual(
          turns.map((turn) => turn.n),
          [n],
          `${t}: one turn, the one confirmed`,
        );
      });
      assert.equal(numbers.size, 4);
      assert.equal(result.stop_reason, 'success');
    } finally {
      await Promise.all(proxies.map((p) => p.close()));
    }
  });
});
