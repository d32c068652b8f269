// Adversary (docs/conversations.md, "A message sent as the run continues as new"; what the
// customer or operator sees on a failure is one clear line, never a raw gRPC error): `agent say`
// and `agent extend` sent while the run's last workflow task is held open by a slow local read.
// The run would end in that task (its step budget is spent). Either the run takes the Update (the
// server makes the task that would end the run see it first) and the CLI says so, or the CLI says
// in one line, in our words, that the run has ended: never the server's NOT_FOUND text.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { billing, final } from '../../offline-model/scripted-replies';
import { runResult } from '../../client/agent-client';
import { eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

const PAUSE_MS = 6000;
const fixture = agentFixture({
  queue: 'adv5-ending',
  workerEnv: { AGENT_TOOL_PAUSE_MS: String(PAUSE_MS), AGENT_TOOL_PAUSE_TOOLS: 'get_user_billing' },
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

const RAW = /NOT_FOUND|RESOURCE_EXHAUSTED|already completed|workflow is closing|Error:|\n\s+at /;

async function sendAsTheRunEnds(command: 'say' | 'extend', marker: string, overrides: object) {
  const id = uniqueId(`adv5-ending-${command}`);
  // Step 1: a slow local read; the step budget is 1, so the run ends in the task that ran it.
  const { handle } = await fixture.start((req) => (req.step === 1 ? billing() : final('Done.')), overrides, { id });
  await eventually('the slow read under way', () =>
    new RegExp(`tool pause: get_user_billing.*${id}|${id}.*tool pause: get_user_billing`).test(fixture.worker.output())
      ? true
      : undefined,
  );
  const proxy = await markerProxy(fixture.env.address, marker);
  try {
    const args = command === 'say' ? ['say', id, marker] : ['extend', id, '--steps', '5', '--reason', marker];
    const out = await runCli({ ...fixture.env, address: proxy.address }, args);
    const result = await runResult(handle);
    const closedAt = (await handle.describe()).closeTime?.getTime();
    return { id, out, result, sentAt: proxy.sentAt(), closedAt };
  } finally {
    await proxy.close();
  }
}

function oneClearLine(out: { code: number; stderr: string }, id: string) {
  assert.equal(out.stderr.trim().split('\n').length, 1, `one line: ${out.stderr}`);
  assert.doesNotMatch(out.stderr, RAW, 'no raw server text');
  assert.match(out.stderr, new RegExp(`run ${id} has ended`));
}

describe('adv5: say and extend sent as the run ends in a slow workflow task', () => {
  it('agent extend: the run takes the top-up and goes on, or one line that it has ended', async () => {
    const { id, out, result, sentAt, closedAt } = await sendAsTheRunEnds('extend', 'adv5 top-up as it ends', {
      budget: { max_steps: 1, max_seconds: 120 },
    });
    console.log(
      `adv5 ending extend: exit ${out.code}; ${JSON.stringify(out.stderr || out.stdout)}; ${result.stop_reason}`,
    );
    assert.ok(
      sentAt !== undefined && closedAt !== undefined && sentAt < closedAt,
      'the extend was sent before the run ended',
    );
    if (out.code === 0) {
      assert.match(out.stdout, new RegExp(`^extended ${id} \\(top-up 1\\): budget now 6 steps`));
      assert.equal(result.extensions?.length, 1);
      assert.equal(result.stop_reason, 'success', 'the top-up let the run go on to its answer');
    } else {
      oneClearLine(out, id);
      assert.equal(result.stop_reason, 'max_steps');
      assert.equal(result.extensions?.length ?? 0, 0);
    }
  });

  it('agent say: the run takes the message, or one line that it has ended', async () => {
    const { id, out, result, sentAt, closedAt } = await sendAsTheRunEnds('say', 'adv5 message as it ends', {
      conversation: {},
      budget: { max_steps: 1, max_seconds: 120 },
    });
    console.log(
      `adv5 ending say: exit ${out.code}; ${JSON.stringify(out.stderr || out.stdout)}; ${result.stop_reason}`,
    );
    assert.ok(
      sentAt !== undefined && closedAt !== undefined && sentAt < closedAt,
      'the say was sent before the run ended',
    );
    const turns = (result.conversation?.turns ?? []).filter((t) => t.text === 'adv5 message as it ends');
    if (out.code === 0) {
      assert.match(out.stdout, new RegExp(`^said \\(turn 1\\) in ${id}`));
      assert.equal(turns.length, 1);
    } else {
      oneClearLine(out, id);
      assert.equal(turns.length, 0);
    }
  });
});
