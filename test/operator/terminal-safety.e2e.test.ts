// A model answer (or tool name) full of terminal escapes reaches the operator's terminal inert:
// `run --wait`, `result`, `watch`, `status`, `trace` and `list` print it without ESC/CSI/OSC
// sequences, other control characters or bidi overrides; `result --json` keeps it exactly, with
// those characters as \u escapes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ScriptedLlmServer } from '../../offline-model/scripted-llm-server';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { testEnv, uniqueId } from '../helpers/harness';
import { startWorkerProcess } from '../../local-servers/worker-process';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { runCli } from '../helpers/cli';

/** What must never reach a terminal raw: C0 but \n and \t, DEL, C1, bidi controls. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

const HOSTILE =
  'Refund: yes.\u001b[2J\u001b[31m RED \u001b[0m \u001b]0;pwned title\u0007 \u001b]8;;https://evil.example\u001b\\link\u001b]8;;\u001b\\ ' +
  '\u202eevil\u202c \u2066iso\u2069 \u009b31m c1 \r overwrite\u0008\u007f';

let llm: ScriptedLlmServer;
let env: TemporalEnv;
let worker: WorkerProcess;

before(async () => {
  llm = await ScriptedLlmServer.start();
  env = testEnv(uniqueId('terminal'));
  worker = startWorkerProcess(env, { OPENAI_BASE_URL: llm.baseUrl });
  await worker.ready;
});

after(async () => {
  await worker?.stop();
  await llm?.close();
});

function assertInert(what: string, out: string): void {
  const hit = UNSAFE.exec(out);
  assert.equal(
    hit,
    null,
    `${what} printed U+${hit?.[0].charCodeAt(0).toString(16).padStart(4, '0')} raw: ${JSON.stringify(out)}`,
  );
}

describe("model text on the operator's terminal", () => {
  it('an answer with ESC, OSC and bidi sequences is printed inert by run --wait, result, watch and status; --json keeps it exactly', async () => {
    const id = uniqueId('hostile-answer');
    llm.script(id, [
      { action: { kind: 'tool', name: 'get_user_profile', args: { user_id: 42 } } },
      { action: { kind: 'final', answer: HOSTILE } },
    ]);
    const run = await runCli(env, ['run', 'User 42 asked: can I get a refund?', '--user', '42', '--id', id, '--wait']);
    assert.equal(run.code, 0, run.stderr);
    assertInert('run --wait', run.stdout);
    assert.match(
      run.stdout,
      /^answer: Refund: yes\.\[2J\[31m RED \[0m \]0;pwned title /m,
      'the text stays, its escapes do not',
    );

    for (const args of [
      ['result', id],
      ['watch', id],
      ['status', id],
      ['trace', id],
    ]) {
      const r = await runCli(env, args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assertInert(args[0]!, r.stdout + r.stderr);
    }
    const json = await runCli(env, ['result', id, '-o', 'json']);
    assertInert('result --json', json.stdout);
    assert.equal(JSON.parse(json.stdout).answer, HOSTILE, 'JSON output is lossless');
  });

  it('a tool name with escapes, denied by the gateway, is printed inert by result, trace and list', async () => {
    const id = uniqueId('hostile-tool');
    const name = '\u001b]0;owned\u0007get_user_profile\u202e';
    llm.script(id, [{ action: { kind: 'tool', name, args: { user_id: 42 } } }]);
    const run = await runCli(env, ['run', 'User 42 asked: can I get a refund?', '--user', '42', '--id', id, '--wait']);
    assert.equal(run.code, 4, `a denied run exits 4 (stopped): ${run.stderr}`);
    assertInert('run --wait', run.stdout);
    assert.match(run.stdout, /^result: stopped \(/m);
    const result = await runCli(env, ['result', id]);
    assert.equal(result.code, 4, result.stderr);
    assertInert('result', result.stdout + result.stderr);
    for (const args of [
      ['trace', id],
      ['trace', id, '-o', 'jsonl'],
      ['list', '--limit', '50'],
      ['list', '-o', 'json', '--limit', '50'],
    ]) {
      const r = await runCli(env, args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assertInert(args.join(' '), r.stdout + r.stderr);
    }
  });
});
