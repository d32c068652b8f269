// Adversary: `agent list` must not let one run's unreadable memo hide the others (docs/cli.md, the
// paragraph on a memo the CLI cannot decode). Here the memo is not encrypted under a missing key but
// written by another client of the namespace as a payload no converter reads: JSON that does not
// parse, and an encoding nobody knows. Any client may start a run of the agent's workflow type.
// A namespace of its own: the counts are exact, and the other files' listings (`cancel --stuck`,
// visibility waits through the SDK's client) never meet these runs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { final } from '../../offline-model/scripted-replies';
import { EFFECTS_MEMO } from '../../common/types';
import { WORKFLOW_TYPE } from '../../client/run-id';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { ensureNamespace, eventually, uniqueId } from '../helpers/harness';

const NAMESPACE = uniqueId('list-corrupt-memo');
let own: TemporalEnv;
const fixture = agentFixture({
  queue: 'list-corrupt-memo',
  worker: false,
  setup: async (f) => {
    await ensureNamespace(f.env, NAMESPACE);
    own = { ...f.queue('own'), namespace: NAMESPACE };
    await f.startWorker({}, own).ready;
  },
});

function utf8(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

async function startWithRawMemo(id: string, encoding: string, data: string): Promise<void> {
  await fixture.client.workflowService.startWorkflowExecution({
    namespace: NAMESPACE,
    workflowId: id,
    workflowType: { name: WORKFLOW_TYPE },
    // A queue no worker polls: the run stays open, listed as any other.
    taskQueue: { name: `${own.taskQueue}-nobody` },
    requestId: randomUUID(),
    memo: { fields: { [EFFECTS_MEMO]: { metadata: { encoding: utf8(encoding) }, data: utf8(data) } } },
    // Waiting for an approval: `agent list --waiting` (the inbox) lists it too.
    searchAttributes: {
      indexedFields: {
        AgentWaiting: { metadata: { encoding: utf8('json/plain'), type: utf8('Keyword') }, data: utf8('"approval"') },
      },
    },
  });
}

describe('agent list with a memo no converter reads', () => {
  it('lists the other rows and says which could not be read', async () => {
    const good = { id: uniqueId('list-corrupt-good') };
    fixture.llm.script(good.id, [final('fine')]);
    const ran = await runCli(own, [
      'run',
      'User 42 asked: is my charge right?',
      '--user',
      '42',
      '--id',
      good.id,
      '--wait',
    ]);
    assert.equal(ran.code, 0, ran.stderr);
    const badJson = `adv-bad-json-${randomUUID().slice(0, 8)}`;
    const badEncoding = `adv-bad-enc-${randomUUID().slice(0, 8)}`;
    await startWithRawMemo(badJson, 'json/plain', '{"confirmed": 1,');
    await startWithRawMemo(badEncoding, 'binary/zstd', 'garbage');
    for (const flags of [[], ['--older-than', '1s'], ['--waiting'], ['--waiting', 'approval', '--older-than', '1s']])
      for (const output of ['text', 'json', 'jsonl']) {
        const args = ['list', ...flags, '--limit', '1000', '-o', output];
        const inbox = flags.includes('--waiting'); // the good run waits for nothing: not in the inbox
        const shown = await eventually(`agent ${args.join(' ')} to show the runs`, async () => {
          const r = await runCli(own, args);
          if (r.code !== 0) return r; // a failure is what the assertions below report
          return r.stdout.includes(badJson) && r.stdout.includes(badEncoding) && (inbox || r.stdout.includes(good.id))
            ? r
            : undefined;
        });
        assert.equal(shown.code, 0, `${args.join(' ')}: ${shown.stderr}`);
        assert.doesNotMatch(shown.stderr + shown.stdout, /at .*\.js:\d+/, 'no stack trace');
        assert.match(
          output === 'text' ? shown.stdout : shown.stderr,
          inbox ? /2 of 2 row\(s\) could not be decoded/ : /2 of 3 row\(s\) could not be decoded/,
          `${args.join(' ')}: ${shown.stdout}${shown.stderr}`,
        );
      }
  });
});

describe('agent list with a broken codec key file', () => {
  it('fails with one line naming the file, never a stack trace or the key', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'adv-keyfile-'));
    const secret = 'c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=';
    const cases = [
      '',
      '{',
      '[]',
      '{"keys":null}',
      '{"active":"k1","keys":{"k1":"short"}}',
      `{"active":"k9","keys":{"k1":"${secret}"}}`,
      `{"active":"k1","keys":{"k1":${JSON.stringify(secret.slice(0, 20))}}}`,
      '{"active":"\\u001b[31mk","keys":{"\\u001b[31mk":"short"}}',
    ];
    for (const [i, content] of cases.entries()) {
      const file = join(dir, `keys-${i}.json`);
      writeFileSync(file, content);
      const r = await runCli(own, ['list', '--limit', '1'], { AGENT_CODEC_KEY_FILE: file });
      assert.notEqual(r.code, 0, `${content}: ${r.stdout}`);
      const text = r.stderr.trim();
      assert.equal(text.split('\n').length, 1, `${content}: ${text}`);
      assert.doesNotMatch(text, /at .*\.js:\d+/, `${content}: ${text}`);
      assert.ok(!text.includes('\u001b'), `${content}: an escape reached the terminal: ${text}`);
      assert.ok(!text.includes(secret.slice(0, 20)), `${content}: the key leaked: ${text}`);
    }
    const missing = await runCli(own, ['list'], { AGENT_CODEC_KEY_FILE: join(dir, 'none.json') });
    assert.notEqual(missing.code, 0);
    assert.equal(missing.stderr.trim().split('\n').length, 1, missing.stderr);
  });
});
