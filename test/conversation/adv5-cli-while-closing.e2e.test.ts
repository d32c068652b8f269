// Adversary (docs/conversations.md, "A message sent as the run continues as new": it is taken by
// the next run about 0.1 s after the closing run ends; the client retries "workflow is closing"
// after 50 ms, at most 0.5 s apart). `agent extend` and `agent say`, real CLI processes, sent while
// the workflow task that ends in continue-as-new is held open by a slow local read: each is taken
// once, by the chain, and the CLI answers within 1 s of the closing run's end (not the SDK's 1-5 s
// backoff, not the 37-41 s of before).
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

const PAUSE_MS = 5000;
const fixture = agentFixture({
  queue: 'adv5-closing-cli',
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

async function sendWhileClosing(command: 'say' | 'extend', marker: string) {
  const id = uniqueId(`adv5-closing-${command}`);
  // Step 1: a slow local read, and the run continues as new in that task. Step 2 (run 2): a
  // question (say) or a slow read again (extend); then the answer.
  const script = (req: RecordedRequest) =>
    req.step === 1
      ? billing()
      : command === 'say' && !JSON.stringify(req.body).includes(marker)
        ? message('Anything else?')
        : command === 'extend' && req.step === 2
          ? billing()
          : final('Done.');
  const { handle } = await fixture.start(
    script,
    {
      continue_as_new_every: 1,
      budget: { max_steps: 10, max_seconds: 120, max_repeats: 0 },
      ...(command === 'say' ? { conversation: {} } : {}),
    },
    { id },
  );
  const firstRun = handle.firstExecutionRunId;
  await eventually('the slow read under way', () =>
    new RegExp(`tool pause: get_user_billing.*${id}|${id}.*tool pause: get_user_billing`).test(fixture.worker.output())
      ? true
      : undefined,
  );
  const proxy = await markerProxy(fixture.env.address, marker);
  try {
    const args = command === 'say' ? ['say', id, marker] : ['extend', id, '--steps', '5', '--reason', marker];
    const out = await runCli({ ...fixture.env, address: proxy.address }, args);
    const answeredAt = Date.now();
    const run1 = await fixture.client.workflow.getHandle(id, firstRun).describe();
    const result = await runResult(handle);
    return { id, out, result, sentAt: proxy.sentAt(), run1Closed: run1.closeTime?.getTime(), answeredAt, run1 };
  } finally {
    await proxy.close();
  }
}

describe('adv5: agent say / agent extend sent while the run continues as new in a slow task', () => {
  it("agent extend: granted once, answered within 1 s of the closing run's end", async () => {
    const { out, result, sentAt, run1Closed, answeredAt, run1 } = await sendWhileClosing(
      'extend',
      'adv5 top-up as it closes',
    );
    // Run 1 may take it in the task itself (then it answers before run 1 closes); otherwise the next
    // run does, within 1 s of run 1's end.
    const late = run1Closed === undefined ? 0 : answeredAt - run1Closed;
    console.log(
      `adv5 closing extend: exit ${out.code}; ${JSON.stringify(out.stderr || out.stdout)}; run 1 ${run1.status.name}; answered ${late} ms after run 1 closed; sent at the slow task's ${sentAt}, run 1 closed at ${run1Closed}`,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.ok(sentAt !== undefined && (run1Closed === undefined || sentAt < run1Closed), 'sent before run 1 closed');
    assert.equal(result.extensions?.length, 1, 'granted once');
    assert.ok(late < 1000, `answered ${late} ms after run 1 closed`);
  });

  it("agent say: one turn, answered within 1 s of the closing run's end", async () => {
    const TEXT = 'adv5 message as it closes';
    const { out, result, sentAt, run1Closed, answeredAt, run1 } = await sendWhileClosing('say', TEXT);
    // Run 1 may take it in the task itself (then it answers before run 1 closes); otherwise the next
    // run does, within 1 s of run 1's end.
    const late = run1Closed === undefined ? 0 : answeredAt - run1Closed;
    console.log(
      `adv5 closing say: exit ${out.code}; ${JSON.stringify(out.stderr || out.stdout)}; run 1 ${run1.status.name}; answered ${late} ms after run 1 closed; sent at the slow task's ${sentAt}, run 1 closed at ${run1Closed}`,
    );
    assert.equal(out.code, 0, out.stderr);
    assert.ok(sentAt !== undefined && (run1Closed === undefined || sentAt < run1Closed), 'sent before run 1 closed');
    const turns = (result.conversation?.turns ?? []).filter((t) => t.from === 'customer' && t.text === TEXT);
    assert.equal(turns.length, 1, 'one turn');
    assert.ok(late < 1000, `answered ${late} ms after run 1 closed`);
  });
});
