// Adversary (docs/conversations.md: say and extend address the conversation's chain; what the
// customer or operator sees on a failure is one clear line, never a raw gRPC error or a stack
// trace): `agent say` and `agent extend`, real CLI processes, aimed at what is not a running
// conversation: a run that is not one, a workflow id nothing ever ran under, a conversation that
// has ended, a workflow id with no run.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { final, message } from '../../offline-model/scripted-replies';
import { runResult } from '../../client/agent-client';
import { uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import type { CliResult } from '../helpers/cli';

const fixture = agentFixture({ queue: 'adv5-target' });

const RAW = /NOT_FOUND|RESOURCE_EXHAUSTED|INVALID_ARGUMENT|FAILED_PRECONDITION|\d+ [A-Z_]{5,}:|Error:|\n\s+at /;

function oneClearLine(out: CliResult, pattern: RegExp): void {
  assert.notEqual(out.code, 0, out.stdout);
  assert.equal(out.stderr.trim().split('\n').length, 1, `one line: ${out.stderr}`);
  assert.doesNotMatch(out.stderr, RAW, `no raw gRPC text: ${out.stderr}`);
  assert.match(out.stderr, pattern);
}

describe('adv5: say and extend aimed at what is not a running conversation', () => {
  it('a run that is not a conversation: say is refused in one line', async () => {
    const { id, handle } = await fixture.start(() => new Promise<never>(() => undefined));
    const out = await runCli(fixture.env, ['say', id, 'hello?']);
    oneClearLine(out, /not a conversation/);
    await handle.terminate('adv5: done');
  });

  it('a workflow id nothing ran under: say and extend fail in one line', async () => {
    const id = uniqueId('adv5-nothing');
    oneClearLine(await runCli(fixture.env, ['say', id, 'hello?']), new RegExp(id));
    oneClearLine(await runCli(fixture.env, ['extend', id, '--steps', '1', '--reason', 'adv5']), new RegExp(id));
  });

  it('a conversation that has ended: say and extend say so in one line', async () => {
    const { id, handle } = await fixture.start(
      (req) => (JSON.stringify(req.body).includes('bye now') ? final('Bye.') : message('Anything else?')),
      { conversation: {} },
    );
    assert.equal((await runCli(fixture.env, ['say', id, 'bye now'])).code, 0);
    await runResult(handle);
    oneClearLine(await runCli(fixture.env, ['say', id, 'one more thing']), new RegExp(`run ${id} has ended`));
    oneClearLine(
      await runCli(fixture.env, ['extend', id, '--steps', '1', '--reason', 'adv5']),
      new RegExp(`run ${id} has ended`),
    );
  });
});
