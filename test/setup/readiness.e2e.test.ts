// GET /readyz on the worker's metrics port: ready only while the worker runs and reaches the
// Temporal server. A real worker process reaches the dev server through a TCP proxy the test cuts:
// /healthz stays 200 (the process runs), /readyz turns 503 with the reason, and 200 again once the
// proxy lets connections through.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';
import { startTcpProxy } from '../helpers/tcp-proxy';
import type { TcpProxy } from '../helpers/tcp-proxy';

let proxy: TcpProxy;

const fixture = agentFixture({
  queue: 'readiness',
  worker: false,
  setup: async () => {
    proxy = await startTcpProxy(fixture.env.address);
  },
});

after(async () => {
  await proxy?.close();
});

async function probe(url: URL): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, text: await response.text() };
}

describe('the worker /readyz', () => {
  it('is 503 while the Temporal server is unreachable, and 200 again once it is reachable', async () => {
    const worker = fixture.startWorker({}, { ...fixture.env, address: proxy.address });
    try {
      await worker.ready;
      const metrics = await eventually(
        'the metrics URL in the worker log',
        () => /metrics=(http:\/\/\S+\/metrics)/.exec(worker.output())?.[1],
      );
      const readyz = new URL('/readyz', metrics);
      const healthz = new URL('/healthz', metrics);
      await eventually('ready through the proxy', async () =>
        (await probe(readyz)).status === 200 ? true : undefined,
      );
      assert.equal((await probe(readyz)).text, 'ok\n');

      proxy.cut();
      const down = await eventually('not ready with the proxy cut', async () => {
        const answer = await probe(readyz);
        return answer.status === 503 ? answer : undefined;
      });
      assert.match(down.text, /^not ready: the Temporal server is unreachable \(.+\)\n$/);
      assert.equal((await probe(healthz)).status, 200, 'the process still runs: healthy, not ready');

      proxy.restore();
      await eventually(
        'ready again once the proxy lets connections through',
        async () => ((await probe(readyz)).status === 200 ? true : undefined),
        90_000,
      );
    } finally {
      await worker.stop();
    }
  });
});
