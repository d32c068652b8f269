// Adversary (docs/conversations.md, "A message sent as the run continues as new": taken by the
// chain, applied exactly once; a failure is one clear line). `agent say` is sent while the workflow
// task that ends in continue-as-new runs a slow local read (the server holds the Update in memory,
// admitted, not yet in the history), and the Temporal server is SIGKILLed and restarted on the
// same database. The customer's message must end up one turn, confirmed; or, if the CLI says it
// failed, in one line, it must not be in the transcript (else the customer sends it again: twice).
import { after, describe, it } from 'node:test';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { billing, final, message } from '../../offline-model/scripted-replies';
import type { RecordedRequest } from '../../offline-model/scripted-llm-server';
import type { TemporalServerHandle } from '../../local-servers/server-handle';
import { serverEnv, startOwnServer, stopOwnServer } from '../helpers/test-server';
import { runResult } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import { connectClient, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

let server: TemporalServerHandle;
const fixture = agentFixture({
  queue: 'adv5-say-restart',
  server: () => serverEnv(server),
  workerEnv: { AGENT_TOOL_PAUSE_MS: '6000', AGENT_TOOL_PAUSE_TOOLS: 'get_user_billing' },
  prepare: async () => {
    server = await startOwnServer();
  },
});
after(() => stopOwnServer(server));

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

describe('adv5: agent say while the server restarts under a run continuing as new', () => {
  it('the message is one turn and confirmed, or refused in one line and absent', async () => {
    const id = uniqueId('adv5-say-restart');
    const TEXT = 'adv5 message across a server restart';
    const LAST = 'adv5 that is all';
    const script = (req: RecordedRequest) => {
      const body = JSON.stringify(req.body);
      return req.step === 1 ? billing() : body.includes(LAST) ? final('Bye.') : message('Anything else?');
    };
    await fixture.start(
      script,
      { conversation: {}, continue_as_new_every: 1, budget: { max_steps: 10, max_seconds: 240, max_repeats: 0 } },
      { id },
    );
    await eventually('the slow read under way', () =>
      new RegExp(`tool pause: get_user_billing.*${id}|${id}.*tool pause: get_user_billing`).test(
        fixture.worker.output(),
      )
        ? true
        : undefined,
    );
    const proxy = await markerProxy(fixture.env.address, TEXT);
    const started = Date.now();
    const said = runCli({ ...fixture.env, address: proxy.address }, ['say', id, TEXT]).then((out) => ({
      out,
      ms: Date.now() - started,
    }));
    // Once the Update is on its way, the server crashes.
    await eventually('the say sent', () => (proxy.sentAt() !== undefined ? true : undefined));
    await server.kill();
    await server.restart();
    const { out, ms } = await said;
    await proxy.close();

    const client = await connectClient(fixture.env);
    try {
      // The conversation goes on: the customer's last message, then the result.
      await eventually(
        'the run takes the last message',
        async () => {
          await sayToRun(client, id, { text: LAST });
          return true;
        },
        60_000,
      );
      const result = await runResult(client.workflow.getHandle(id));
      const turns = (result.conversation?.turns ?? []).filter((t) => t.from === 'customer' && t.text === TEXT);
      console.log(
        `adv5 say-restart: say exit ${out.code} after ${ms} ms: ${JSON.stringify(out.stderr || out.stdout)}; result ${result.stop_reason}; ${turns.length} turn(s)`,
      );
      if (out.code === 0) assert.equal(turns.length, 1, 'confirmed: one turn');
      else {
        assert.equal(out.stderr.trim().split('\n').length, 1, `one line: ${out.stderr}`);
        assert.equal(
          turns.length,
          0,
          `the CLI said the message failed (${out.stderr.trim()}), and it is in the transcript`,
        );
      }
    } finally {
      await client.connection.close();
    }
  });
});
