// What the CLI prints when an Update or a signal reached a run continuing as new after the client's
// retries (runtime/closing-run-retry.ts): one line that says nothing was applied, not the server's text.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeError } from '../../cli/cli';
import { EXIT } from '../../client/agent-error';

const env = { address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'q' } as Parameters<typeof describeError>[1];

describe('the CLI on a run that was closing', () => {
  it('says the run was continuing as new and nothing was applied, under the SDK wrapping too', async () => {
    const server = Object.assign(
      new Error('8 RESOURCE_EXHAUSTED: workflow operation can not be applied because workflow is closing'),
      { code: 8 },
    );
    const wrapped = Object.assign(new Error('Workflow Update failed'), { cause: server });
    for (const err of [server, wrapped]) {
      const { message, code } = await describeError(err, env);
      assert.equal(message, 'the run was continuing as new: nothing was applied; send it again');
      assert.equal(code, EXIT.ERROR);
    }
  });

  it('leaves another RESOURCE_EXHAUSTED as the server said it', async () => {
    const busy = Object.assign(new Error('8 RESOURCE_EXHAUSTED: namespace rate limit exceeded'), { code: 8 });
    assert.match((await describeError(busy, env)).message, /namespace rate limit exceeded/);
  });
});
