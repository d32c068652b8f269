// Broke 2026-12-07 (adversary round), fixed the same day: `agent extend` prints `agent: workflow update was aborted by closing workflow`
// (the server's text, no run id), where `agent say` says `run ID has ended (TERMINATED): ...`.
// Adversary (docs/conversations.md, "A message sent as the run continues as new"; what the
// customer or operator sees on a failure is one clear line, never a raw gRPC error): `agent say`
// and `agent extend` sent while the run's workflow task is held open by a slow local read (the
// server has admitted the Update, the run has not taken it), then an operator terminates the run
// with Temporal's CLI. The CLI must say in one line, in our words, that the run has ended.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { billing, final } from '../../offline-model/scripted-replies';
import { eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { temporalCli } from '../helpers/temporal-cli-run';

const PAUSE_MS = 8000;
const fixture = agentFixture({
  queue: 'adv5-terminate-extend',
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

async function sendThenTerminate(command: 'say' | 'extend', marker: string, overrides: object) {
  const id = uniqueId(`adv5-terminate-${command}`);
  const { handle } = await fixture.start((req) => (req.step === 1 ? billing() : final('Done.')), overrides, { id });
  await eventually('the slow read under way', () =>
    new RegExp(`tool pause: get_user_billing.*${id}|${id}.*tool pause: get_user_billing`).test(fixture.worker.output())
      ? true
      : undefined,
  );
  const proxy = await markerProxy(fixture.env.address, marker);
  try {
    const args = command === 'say' ? ['say', id, marker] : ['extend', id, '--steps', '5', '--reason', marker];
    const cli = runCli({ ...fixture.env, address: proxy.address }, args);
    await eventually('the Update sent', () => (proxy.sentAt() !== undefined ? true : undefined));
    const terminated = await temporalCli(fixture.env, [
      'workflow',
      'terminate',
      '--workflow-id',
      id,
      '--reason',
      'adv5',
    ]);
    assert.equal(terminated.code, 0, terminated.stderr);
    const out = await cli;
    const status = (await handle.describe()).status.name;
    return { id, out, status };
  } finally {
    await proxy.close();
  }
}

describe('adv5: say and extend in flight when the run is terminated', () => {
  it('agent extend: one line, in our words, that the run has ended', async () => {
    const { id, out, status } = await sendThenTerminate('extend', 'adv5 top-up as it is terminated', {
      budget: { max_seconds: 120 },
    });
    console.log(`adv5 terminate extend: exit ${out.code}; ${JSON.stringify(out.stderr || out.stdout)}; ${status}`);
    assert.equal(status, 'TERMINATED');
    assert.notEqual(out.code, 0);
    assert.equal(out.stderr.trim().split('\n').length, 1, `one line: ${out.stderr}`);
    assert.doesNotMatch(out.stderr, RAW, 'no raw server text');
    assert.match(out.stderr, new RegExp(`run ${id} has ended \\(TERMINATED\\)`));
  });
});
