// Broke 2026-12-07 (adversary round), fixed the same day: `agent extend` prints `agent: workflow execution not found` (the server's
// text, no run id, while a run does exist under the id); the top-up is rightly not granted.
// Adversary (docs/conversations.md, "A message sent as the run continues as new": say and extend
// address the conversation's chain, and never reach a later conversation started under the same
// workflow id; a failure is one clear line). The request is held on the wire (a stalled network)
// after the client read the chain, while that conversation ends and a new one starts under the same
// id; then it goes through. The new conversation must not take it, and the CLI must say why in one line.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { final, message } from '../../offline-model/scripted-replies';
import type { RecordedRequest } from '../../offline-model/scripted-llm-server';
import { runResult } from '../../client/agent-client';
import { eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

const fixture = agentFixture({ queue: 'adv5-held-extend' });

/** A TCP proxy that holds back what the client sends from the chunk carrying `marker` on, until release(). */
async function holdingProxy(upstream: string, marker: string) {
  const sep = upstream.lastIndexOf(':');
  const target = { host: upstream.slice(0, sep), port: Number(upstream.slice(sep + 1)) };
  const sockets = new Set<net.Socket>();
  const held: Array<() => void> = [];
  let holding = false;
  let seen = false;
  const server = net.createServer((client) => {
    const remote = net.connect(target);
    for (const s of [client, remote]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s)).on('error', () => s.destroy());
    }
    client.on('data', (d: Buffer) => {
      if (!seen && d.includes(marker)) holding = seen = true;
      if (holding) held.push(() => remote.write(d));
      else remote.write(d);
    });
    remote.on('data', (d: Buffer) => client.write(d));
    client.once('close', () => remote.destroy());
    remote.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    holding: () => holding,
    release: () => {
      holding = false;
      for (const write of held.splice(0)) write();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const script = (req: RecordedRequest) =>
  JSON.stringify(req.body).includes('goodbye') ? final('Bye.') : message('Anything else?');

async function heldAcrossConversations(args: (id: string) => string[], marker: string) {
  const id = uniqueId('adv5-held');
  const old = await fixture.start(script, { conversation: {} }, { id });
  await eventually('the first question', () => (fixture.llm.requests(id).length >= 1 ? true : undefined));
  const proxy = await holdingProxy(fixture.env.address, marker);
  try {
    const cli = runCli({ ...fixture.env, address: proxy.address }, args(id));
    await eventually('the request held on the wire', () => (proxy.holding() ? true : undefined));
    // The first conversation ends; a new one starts under the same workflow id.
    assert.equal((await runCli(fixture.env, ['say', id, 'goodbye'])).code, 0);
    await runResult(old.handle);
    const next = await fixture.start(script, { conversation: {}, budget: { max_seconds: 120 } }, { id });
    await eventually('the new conversation asks', () => (fixture.llm.requests(id).length >= 3 ? true : undefined));
    proxy.release();
    const out = await cli;
    // The new conversation ends; what it took is in its result.
    assert.equal((await runCli(fixture.env, ['say', id, 'goodbye'])).code, 0);
    const result = await runResult(next.handle);
    return { id, out, result };
  } finally {
    await proxy.close();
  }
}

describe('adv5: say / extend held on the wire while the conversation ends and another starts', () => {
  it('agent extend: the new conversation does not take it; one line says the run has ended', async () => {
    const REASON = 'adv5 held top-up';
    const { id, out, result } = await heldAcrossConversations(
      (id) => ['extend', id, '--steps', '3', '--reason', REASON],
      REASON,
    );
    console.log(`adv5 held extend: exit ${out.code}: ${JSON.stringify(out.stderr || out.stdout)}`);
    assert.equal(result.extensions?.length ?? 0, 0, 'not granted to the new conversation');
    assert.notEqual(out.code, 0);
    assert.equal(out.stderr.trim().split('\n').length, 1);
    assert.match(out.stderr, new RegExp(`run ${id} has ended`));
  });
});
