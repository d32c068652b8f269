// Adversary: docs/configuration.md and domains/retail/backend/open.ts promise that a bad
// AGENT_RETAIL_DATABASE_URL stops the worker at its start, in one line, without its password
// (runtime/postgres-url.ts: "a port from 1 to 65535"). These URLs are bad before any connection
// is tried; the worker is expected to refuse them, not to start and fail each retail call later.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { agentFixture } from '../helpers/agent-fixture';

const fixture = agentFixture({ queue: 'adv-retail-url', worker: false });

const PASSWORD = 'S3CRETpw';
const BAD_URLS: Array<[string, string]> = [
  // The control: a URL the check does refuse (this one passes).
  ['port 99999', `postgres://agent:${PASSWORD}@127.0.0.1:99999/retail`],
  ['port 0', `postgres://agent:${PASSWORD}@127.0.0.1:0/retail`],
  [
    'a CA file that does not exist',
    `postgres://agent:${PASSWORD}@127.0.0.1:5432/retail?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem`,
  ],
  ['a NUL in the database name', `postgres://agent:${PASSWORD}@127.0.0.1:5432/ret%00ail`],
];

describe('adversary: a bad AGENT_RETAIL_DATABASE_URL', () => {
  for (const [what, url] of BAD_URLS) {
    it(`is refused at the worker's start in one line without its password: ${what}`, async () => {
      const worker = fixture.startWorker({ AGENT_RETAIL_DATABASE_URL: url });
      let refusal: Error | undefined;
      try {
        await worker.ready;
      } catch (err) {
        refusal = err as Error;
      } finally {
        await worker.kill();
      }
      assert.ok(refusal, `the worker started with ${what} in AGENT_RETAIL_DATABASE_URL`);
      const output = worker.output();
      assert.equal(output.split('\n').filter((l) => /AGENT_RETAIL_DATABASE_URL/.test(l)).length, 1, output);
      assert.doesNotMatch(output, /^\s+at /m, 'a stack trace');
      assert.doesNotMatch(worker.output(), new RegExp(PASSWORD));
    });
  }
});
