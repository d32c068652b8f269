// Found by an adversary: "a bad AGENT_REFUNDS_DATABASE_URL is a clear one-line error that never echoes the
// password". URLs an operator really writes (a generated password with '/' or '%' left unencoded,
// a mistyped port) get past the worker's start check: the worker says it is ready and the error
// comes only at the first refund, inside the refund activity, and for one of them it names
// neither the variable nor the problem ("URI malformed"), for another the ledger's description
// carries the password. AGENT_RETAIL_DATABASE_URL (the retail store) is held to the same rules.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PostgresRefundService } from '../../domains/support/backend/refunds/postgres';
import { PostgresRetailStore } from '../../domains/retail/backend/postgres';
import { WorkerFleet } from '../../local-servers/worker-process';
import { testEnv, uniqueId } from '../helpers/harness';

const PASSWORD = 'Zq8secretPW';
/** Each one is not a usable postgres:// URL; each carries PASSWORD. */
const BAD_URLS = {
  'a port past 65535': `postgres://agent:${PASSWORD}@db.example.com:99999/ledger`,
  "an unencoded '/' in the password": `postgres://agent:ab/${PASSWORD}@db.example.com:5432/ledger`,
  "an unencoded '%' in the password": `postgres://agent:%ff${PASSWORD}@127.0.0.1:1/ledger`,
};

/** The worker's start: exit code and output, or 'ready' when it started polling. */
async function startWith(
  url: string,
  name = 'AGENT_REFUNDS_DATABASE_URL',
): Promise<{ outcome: 'ready' | 'exited'; output: string }> {
  const fleet = new WorkerFleet();
  const worker = fleet.start(testEnv(uniqueId('adv-ledger-url')), { [name]: url });
  try {
    const outcome = await worker.ready.then(
      () => 'ready' as const,
      () => 'exited' as const,
    );
    return { outcome, output: worker.output() };
  } finally {
    await fleet.killAll();
  }
}

describe('a bad AGENT_REFUNDS_DATABASE_URL', () => {
  for (const [what, url] of Object.entries(BAD_URLS)) {
    it(`with ${what}: the worker refuses to start, in one line naming the variable, without the password`, async () => {
      const { outcome, output } = await startWith(url);
      assert.equal(outcome, 'exited', `the worker started with a ledger URL it cannot use:\n${output}`);
      assert.doesNotMatch(output, /^\s+at /m, 'a stack trace instead of one line');
      assert.match(output, /AGENT_REFUNDS_DATABASE_URL/);
      assert.ok(!output.includes(PASSWORD), output);
    });
  }

  // The ledger itself (a reader that skipped the start check) refuses them the same way, at open.
  for (const [what, url] of Object.entries({
    ...BAD_URLS,
    "a '/' after a numeric first part of the password": `postgres://agent:1234/${PASSWORD}@127.0.0.1:5432/ledger`,
  })) {
    it(`the ledger refuses a URL ${what} at open: one line naming the variable, no password`, () => {
      assert.throws(
        () => PostgresRefundService.open(url),
        (err: Error) =>
          /AGENT_REFUNDS_DATABASE_URL/.test(err.message) &&
          !err.message.includes(PASSWORD) &&
          !err.message.includes('\n'),
      );
    });
  }
});

describe('a bad AGENT_RETAIL_DATABASE_URL', () => {
  for (const [what, url] of Object.entries(BAD_URLS)) {
    it(`with ${what}: the worker refuses to start, in one line naming the variable, without the password`, async () => {
      const { outcome, output } = await startWith(url, 'AGENT_RETAIL_DATABASE_URL');
      assert.equal(outcome, 'exited', `the worker started with a retail URL it cannot use:\n${output}`);
      assert.doesNotMatch(output, /^\s+at /m, 'a stack trace instead of one line');
      assert.match(output, /AGENT_RETAIL_DATABASE_URL/);
      assert.ok(!output.includes(PASSWORD), output);
    });
    it(`the retail store refuses a URL ${what} at open: one line naming the variable, no password`, () => {
      assert.throws(
        () => PostgresRetailStore.open(url),
        (err: Error) =>
          /AGENT_RETAIL_DATABASE_URL/.test(err.message) &&
          !err.message.includes(PASSWORD) &&
          !err.message.includes('\n'),
      );
    });
  }
});
