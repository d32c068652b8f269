// `agent list` where one run's memo is encrypted under a key the CLI lacks (a key rotation the CLI
// has not caught up with): the other runs are listed as usual, that one too from what needs no key
// (id, status, start time, search attributes) with its effects marked undecodable, and one line at
// the end says how many rows could not be decoded and which key id is missing. Before, one such
// run made the whole listing fail. A namespace of its own, so the counts are exact.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { escalate } from '../../offline-model/scripted-replies';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { codecEnv, newKey } from '../helpers/codec';
import { ensureNamespace, eventually, uniqueId } from '../helpers/harness';

const K1 = newKey();
const K2 = newKey();
const NO_CODEC = { AGENT_CODEC_KEYS: '', AGENT_CODEC_KEY_FILE: '', AGENT_CODEC_ACTIVE_KEY_ID: '' };
/** The CLI that lists: it has k1 only. */
const ONLY_K1 = { ...NO_CODEC, ...codecEnv({ k1: K1 }, 'k1') };
/** Writers: both keys, writing under `active`. */
const writing = (active: 'k1' | 'k2') => ({ ...NO_CODEC, ...codecEnv({ k1: K1, k2: K2 }, active) });

const NAMESPACE = uniqueId('list-undecodable');
let underK1: TemporalEnv;
let underK2: TemporalEnv;
const fixture = agentFixture({
  queue: 'list-undecodable',
  worker: false,
  setup: async (f) => {
    await ensureNamespace(f.env, NAMESPACE);
    underK1 = { ...f.queue('k1'), namespace: NAMESPACE };
    underK2 = { ...f.queue('k2'), namespace: NAMESPACE };
    for (const [on, active] of [
      [underK1, 'k1'],
      [underK2, 'k2'],
    ] as const) {
      const worker = f.startWorker(writing(active), on);
      await worker.ready;
    }
  },
});

/** A run that waits for a person and is cancelled: its memo (the partial result) written under `active`. */
async function cancelledRun(on: TemporalEnv, active: 'k1' | 'k2'): Promise<string> {
  const id = uniqueId(`list-${active}`);
  fixture.llm.script(id, [escalate('a person must decide')]);
  const started = await runCli(
    on,
    ['run', 'User 42 asked: is my charge right?', '--user', '42', '--id', id],
    writing(active),
  );
  assert.equal(started.code, 0, started.stderr);
  await eventually(`${id} waiting`, async () => {
    const r = await runCli(on, ['list', '--waiting', 'escalation', '-o', 'json'], writing('k1'));
    return r.code === 0 && r.stdout.includes(id) ? true : undefined;
  });
  const cancelled = await runCli(on, ['cancel', id, '--wait', '60s'], writing(active));
  assert.equal(cancelled.code, 0, cancelled.stdout + cancelled.stderr);
  return id;
}

interface Row {
  workflow_id: string;
  status: string;
  agent_status: string | null;
  start_time: string;
  effects: unknown;
  undecodable?: string;
}

describe('agent list with a run encrypted under a key the CLI lacks', () => {
  it('every row is listed, the undecodable one marked; one line says how many and which key id is missing', async () => {
    const readable = await cancelledRun(underK1, 'k1');
    const hidden = await cancelledRun(underK2, 'k2');
    // Both cancelled and visible (visibility lags the close).
    const rows = await eventually('both runs cancelled in the listing', async () => {
      const r = await runCli(underK1, ['list', '-o', 'json'], ONLY_K1);
      assert.equal(r.code, 0, `agent list failed: ${r.stderr}`);
      const listed = JSON.parse(r.stdout) as Row[];
      return listed.length === 2 && listed.every((row) => row.status === 'CANCELLED')
        ? { listed, stderr: r.stderr }
        : undefined;
    });
    const byId = new Map(rows.listed.map((row) => [row.workflow_id, row]));
    assert.equal(byId.get(readable)!.undecodable, undefined, 'the run under k1 is read whole');
    const marked = byId.get(hidden)!;
    assert.match(marked.undecodable ?? '', /key "k2"/);
    assert.equal(marked.effects, null);
    assert.equal(marked.agent_status, 'cancelled', 'its search attributes are read without a key');
    assert.ok(!Number.isNaN(Date.parse(marked.start_time)));
    // The note goes to stderr when stdout is JSON.
    assert.match(rows.stderr, /^1 of 2 row\(s\) could not be decoded .*key "k2".*AGENT_CODEC_KEYS/m);
    assert.ok(!/\n\s+at /.test(rows.stderr), 'no stack trace');

    const text = await runCli(underK1, ['list'], ONLY_K1);
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.trimEnd().split('\n');
    assert.match(lines.find((l) => l.startsWith(hidden)) ?? '', /cancelled .*undecodable/);
    assert.doesNotMatch(lines.find((l) => l.startsWith(readable)) ?? '', /undecodable/);
    assert.match(lines.at(-1)!, /^1 of 2 row\(s\) could not be decoded .*which this process does not have/);

    // The inbox's listing too: both rows, then the same note after the query and the Web UI link.
    const inbox = await runCli(underK1, ['list', '--waiting', 'none'], ONLY_K1);
    assert.equal(inbox.code, 0, inbox.stderr);
    assert.ok(inbox.stdout.includes(readable) && inbox.stdout.includes(hidden), inbox.stdout);
    assert.match(inbox.stdout.trimEnd().split('\n').at(-1)!, /^1 of 2 row\(s\) could not be decoded .*key "k2"/);

    // By chain age each run is described too (its memo decoded again): the same rows, the same mark.
    const old = await runCli(underK1, ['list', '--older-than', '1s', '-o', 'json'], ONLY_K1);
    assert.equal(old.code, 0, old.stderr);
    const aged = JSON.parse(old.stdout) as Row[];
    assert.deepEqual(aged.map((r) => r.workflow_id).sort(), [readable, hidden].sort());
    assert.match(aged.find((r) => r.workflow_id === hidden)!.undecodable ?? '', /key "k2"/);
  });
});
