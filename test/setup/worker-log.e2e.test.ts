// The worker's event log on stdout, read line by line from real worker processes running the refund
// scenario: one line per event in the format asked (LOG_FORMAT), from the level asked (LOG_LEVEL),
// exactly one line per tool result with its redacted view, and never an activity's task token.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runResult, startRun } from '../../client/agent-client';
import { billing, final, policy, profile } from '../../offline-model/scripted-replies';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { agentFixture } from '../helpers/agent-fixture';
import { agentInput, eventually, uniqueId } from '../helpers/harness';

const fixture = agentFixture({ queue: 'worker-log', worker: false });

/** A worker with `env`, its stdout kept apart (the fixture's output() has stderr too). */
async function loggingWorker(env: Record<string, string>) {
  const on = fixture.queue('worker-log');
  const worker: WorkerProcess = fixture.startWorker(env, on);
  let stdout = '';
  worker.proc.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  // Its own ready line (stderr): the SDK's "Worker state changed" is an INFO event, not logged at warn.
  await eventually('the worker ready line', () => (worker.output().includes('worker ready:') ? true : undefined));
  return { on, worker, lines: () => stdout.split('\n').filter((l) => l !== '') };
}

/** The refund scenario's three reads and an answer, on `on`; its workflow id. */
async function refundScenario(on: Parameters<typeof startRun>[1]): Promise<string> {
  const id = uniqueId('worker-log');
  fixture.llm.script(id, [profile(), billing(), policy(), final('User 42 paid USD 49.00 ten days ago.')]);
  const result = await runResult(await startRun(fixture.client, on, agentInput(), id));
  assert.equal(result.stop_reason, 'success');
  return id;
}

describe("the worker's event log", { concurrency: true }, () => {
  it('LOG_FORMAT=json: one JSON object a line; one line per tool result, redacted; no task token', async () => {
    const { on, worker, lines } = await loggingWorker({ LOG_FORMAT: 'json' });
    const id = await refundScenario(on);
    await worker.stop(); // everything flushed
    const records = lines().map((line) => {
      const record = JSON.parse(line) as Record<string, unknown>;
      assert.match(String(record.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, line);
      assert.ok(['INFO', 'WARN', 'ERROR'].includes(String(record.level)), line);
      assert.equal(typeof record.message, 'string', line);
      return record;
    });
    assert.ok(records.some((r) => r.message === 'Worker state changed' && r.state === 'RUNNING'));
    const tools = records.filter((r) => String(r.message).startsWith('tool observation: ') && r.workflowId === id);
    assert.deepEqual(
      tools.map((r) => [r.message, r.activityType, r.ok]),
      [
        ['tool observation: get_user_profile', 'get_user_profile', true],
        ['tool observation: get_user_billing', 'get_user_billing', true],
        ['tool observation: search_policy', 'search_policy', true],
      ],
    );
    assert.match(
      String(tools[0]!.data),
      /"name":"\[redacted\]"/,
      "the profile's name is redacted as the model sees it",
    );
    assert.ok(!records.some((r) => 'taskToken' in r), 'no task token');
  });

  it('LOG_FORMAT=text: "time LEVEL message key=value" lines; the tool result in one line', async () => {
    const { on, worker, lines } = await loggingWorker({ LOG_FORMAT: 'text' });
    const id = await refundScenario(on);
    await worker.stop();
    for (const line of lines()) assert.match(line, /^\d{4}-\d\d-\d\dT\S+Z (INFO|WARN|ERROR) \S/, line);
    const billingLine = lines().filter((l) => l.includes('tool observation: get_user_billing') && l.includes(id));
    assert.equal(billingLine.length, 1, lines().join('\n'));
    assert.match(billingLine[0]!, / activityType=get_user_billing /);
    assert.match(billingLine[0]!, / data="\{\\"billing\\":\{\\"currency\\":\\"USD\\",/);
    assert.ok(!lines().some((l) => /taskToken/.test(l)), 'no task token');
  });

  it('LOG_LEVEL=warn: no info events', async () => {
    const { on, worker, lines } = await loggingWorker({ LOG_LEVEL: 'warn' });
    await refundScenario(on);
    await worker.stop();
    for (const line of lines()) assert.match(line, /^\S+ (WARN|ERROR) /, line);
    assert.ok(!lines().some((l) => l.includes('tool observation')));
  });
});
