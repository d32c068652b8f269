// The /readyz check (worker/readiness.ts) against a stand-in connection: not ready while the worker
// does not run (the server is not even asked), a failed call says why in one line, and a flood of
// probes costs the server one call per CHECK_FRESH_MS.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { workerReadiness } from '../../worker/readiness';

function connection(answer: () => Promise<unknown>) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    withDeadline: <T>(_deadline: number | Date, fn: () => Promise<T>) => fn(),
    workflowService: {
      getSystemInfo: () => {
        calls++;
        return answer();
      },
    },
  };
}

type Connection = Parameters<typeof workerReadiness>[1];

describe('the readiness check', () => {
  it('is not ready while the worker does not run, without asking the server', async () => {
    const conn = connection(() => Promise.resolve({}));
    const check = workerReadiness(() => false, conn as unknown as Connection);
    assert.deepEqual(await check(), { ready: false, reason: 'the worker is not running' });
    assert.equal(conn.calls, 0);
  });

  it('says in one line why the server is unreachable, whatever the error text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 500 }), async (message) => {
        const conn = connection(() => Promise.reject(new Error(message)));
        const { ready, reason } = await workerReadiness(() => true, conn as unknown as Connection)();
        assert.equal(ready, false);
        assert.match(reason, /^the Temporal server is unreachable \(/);
        assert.ok(!reason.includes('\n') && reason.length < 260, reason);
      }),
      { numRuns: 200 },
    );
  });

  it('answers a burst of probes with one call to the server', async () => {
    let release: () => void = () => undefined;
    const conn = connection(() => new Promise<void>((resolve) => (release = resolve)));
    const check = workerReadiness(() => true, conn as unknown as Connection);
    const answers = Array.from({ length: 100 }, () => check());
    release();
    for (const answer of await Promise.all(answers)) assert.deepEqual(answer, { ready: true, reason: 'ok' });
    assert.deepEqual(await check(), { ready: true, reason: 'ok' }, 'a fresh answer is reused');
    assert.equal(conn.calls, 1);
  });
});
