// Hostile messages to the LLM limiter, sent with Temporal's own CLI to every Signal and Update it
// has: null, nothing, missing fields, wrong types, NaN-like strings, arrays, huge strings, payloads
// of an unknown encoding. A bad Update is refused with one line, a bad Signal dropped with one line
// in the worker's log; the limiter's workflow task never fails, and it goes on granting leases. A
// limiter started with a bad input fails at once with one line; one that meets a bug (a carried
// state it cannot read) fails where it is seen, instead of retrying its workflow task forever.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker } from '@temporalio/worker';
import {
  LIMITER_TOO_LARGE,
  LIMITER_WORKFLOW_TYPE,
  limiterQuery,
  limiterWorkflowId,
} from '../../common/limiter/llm-limiter';
import { NO_METRICS_SINKS } from '../../worker/metrics';
import { workflowCode } from '../../worker/workflow-bundle';
import { final } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually, uniqueId } from '../helpers/harness';

const MODEL = uniqueId('limiter-hostile-model');
const DIR = mkdtempSync(path.join(tmpdir(), 'limiter-hostile-'));
const TINY_MODEL = uniqueId('limiter-tiny-model');
const PRICES_FILE = path.join(DIR, 'prices.json');
const PRICE = { input_usd_per_mtok: 0.4, output_usd_per_mtok: 1.6 };
writeFileSync(PRICES_FILE, JSON.stringify({ [MODEL]: PRICE, [TINY_MODEL]: PRICE }));
const LIMITS = { tokens_per_minute: 100_000, requests_per_minute: 0, max_in_flight: 2, lease_ttl_ms: 60_000 };

const fixture = agentFixture({
  queue: 'limiter-hostile',
  workerEnv: {
    OPENAI_MODEL: MODEL,
    AGENT_PRICES_FILE: PRICES_FILE,
    AGENT_LLM_MAX_IN_FLIGHT: '2',
    AGENT_LLM_TPM: '100000',
    AGENT_LLM_LEASE_TTL_SECONDS: '60',
  },
});
const exec = promisify(execFile);

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Temporal's own CLI against the test server; never throws. */
async function temporalCli(args: string[]): Promise<CliRun> {
  const cli = process.env.TEMPORAL_CLI_PATH;
  assert.ok(cli, 'TEMPORAL_CLI_PATH is set by `npm test`');
  try {
    const { stdout, stderr } = await exec(
      cli,
      [...args, '--address', fixture.env.address, '--namespace', fixture.env.namespace],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A payload as the CLI's arguments: none, `--input` JSON texts, files (for the huge ones), or raw flags. */
type Input = { none: true } | { json: string[] } | { file: string } | { flags: string[] };
const huge = (name: string, value: unknown): Input => {
  const file = path.join(DIR, `${name}.json`);
  writeFileSync(file, JSON.stringify(value));
  return { file };
};
const cliInput = (input: Input): string[] =>
  'none' in input
    ? []
    : 'file' in input
      ? ['--input-file', input.file]
      : 'flags' in input
        ? input.flags
        : input.json.flatMap((j) => ['--input', j]);

const BIG = 'x'.repeat(300_000);
const json = (...values: unknown[]): Input => ({ json: values.map((v) => JSON.stringify(v)) });
/** What any handler may be sent: no payload, nothing like an object, two arguments, huge ones. */
const ANY: Input[] = [
  { none: true },
  json(null),
  json({}),
  json([]),
  json([1, 2]),
  json('NaN'),
  json(42),
  json(true),
  json({}, {}),
  huge('big-string', BIG),
  huge(
    'big-array',
    Array.from({ length: 20_000 }, (_, i) => i),
  ),
  // Payloads no converter can read: an unknown encoding, first or second of two arguments.
  { flags: ['--input', '{}', '--input-meta', 'encoding=bogus'] },
  {
    flags: ['--input', '{}', '--input', '"x"', '--input-meta', 'encoding=json/plain', '--input-meta', 'encoding=bogus'],
  },
];
const SIGNALS: Record<string, Input[]> = {
  release: [
    ...ANY,
    json({ lease_id: 5, used_tokens: 'x' }),
    json({ lease_id: null }),
    json({ lease_id: ['a'], used_tokens: 1 }),
    json({ used_tokens: 100 }),
    huge('big-lease-id', { lease_id: BIG, used_tokens: 1 }),
  ],
  pause: [
    ...ANY,
    json({ retry_after_ms: 'NaN' }),
    json({ retry_after_ms: 'Infinity' }),
    json({ retry_after_ms: '1e309' }),
    json({ retry_after_ms: -5 }),
    json({ retry_after_ms: null }),
    json({ retry_after_ms: [1000] }),
    json({ retry_after: 1000 }),
  ],
  withdraw: [
    ...ANY,
    json({ id: ['a'] }),
    json({ id: { $ne: 1 } }),
    json({ id: 7 }),
    json({ id: '' }),
    huge('big-id', { id: BIG }),
  ],
};
/** Well-formed, but about no lease: ignored without a word, like a repeated release. */
const HARMLESS: Array<[string, Input]> = [
  ['release', json({ lease_id: 'NaN', used_tokens: 'NaN' })],
  ['release', json({ lease_id: 'no-such-lease', used_tokens: -1e308 })],
  ['withdraw', json({ id: 'no-such-request' })],
];
const request = { id: 'hostile-1', holder: 'cli', tokens: 10, limits: LIMITS };
const ACQUIRE: Input[] = [
  ...ANY,
  json({ ...request, id: undefined }),
  json({ ...request, id: 'x'.repeat(65) }),
  json({ ...request, id: 'tab\there' }),
  json({ ...request, tokens: 'NaN' }),
  json({ ...request, tokens: -1 }),
  json({ ...request, tokens: 1.5 }),
  json({ ...request, tokens: 2 ** 60 }),
  json({ ...request, limits: undefined }),
  json({ ...request, limits: null }),
  json({ ...request, limits: [1, 2, 3, 4] }),
  json({ ...request, limits: { ...LIMITS, tokens_per_minute: -1 } }),
  json({ ...request, limits: { ...LIMITS, requests_per_minute: 'NaN' } }),
  json({ ...request, limits: { ...LIMITS, lease_ttl_ms: 1e300 } }),
  json({ ...request, limits: { ...LIMITS, lease_ttl_ms: 0 } }),
  json({ ...request, again: 'yes' }),
  json({ ...request, id: 'hostile-holder-object', holder: { toString: 1 } }),
  json({ ...request, id: 'hostile-holder-number', holder: 7 }),
  huge('big-request', { ...request, id: BIG }),
  huge('big-holder', { ...request, id: 'hostile-holder', holder: BIG, tokens: 'x' }),
];

const limiterId = limiterWorkflowId(MODEL);

/** Every workflow task failure in the limiter's history (there must be none). */
async function taskFailures(workflowId: string): Promise<string[]> {
  const events = (await fixture.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return events.flatMap((e) =>
    e.workflowTaskFailedEventAttributes ? [e.workflowTaskFailedEventAttributes.failure?.message ?? '?'] : [],
  );
}

describe('the LLM limiter under hostile messages', () => {
  after(() => rmSync(DIR, { recursive: true, force: true }));

  it("every Signal and Update, sent anything by Temporal's CLI: refused or dropped in one line; the limiter still grants", async () => {
    // A decision starts the limiter, as in production (update-with-start).
    assert.equal((await fixture.run([final('before')])).result.stop_reason, 'success');
    const granted = (await fixture.client.workflow.getHandle(limiterId).query(limiterQuery)).granted.granted;

    const signals = Object.entries(SIGNALS).flatMap(([name, inputs]) =>
      inputs.map((input): [string, Input] => [name, input]),
    );
    for (const [name, input] of [...signals, ...HARMLESS]) {
      const r = await temporalCli([
        'workflow',
        'signal',
        '--workflow-id',
        limiterId,
        '--name',
        name,
        ...cliInput(input),
      ]);
      assert.equal(r.code, 0, `signal ${name} ${JSON.stringify(input).slice(0, 80)}: ${r.stderr}`);
    }
    for (const input of ACQUIRE) {
      const what = `acquire ${JSON.stringify(input).slice(0, 100)}`;
      const r = await temporalCli([
        'workflow',
        'update',
        'execute',
        '--workflow-id',
        limiterId,
        '--name',
        'acquire',
        ...cliInput(input),
      ]);
      assert.notEqual(r.code, 0, `${what} was accepted: ${r.stdout}`);
      // One line from the limiter's validator (the CLI prefixes its own words), never a stack trace.
      const reason = r.stderr.trim();
      assert.match(reason, /must|needs|Unknown encoding/, what);
      assert.ok(!/\n\s+at /.test(reason), `${what}: ${reason}`);
    }

    // Every Signal was seen and dropped: the worker logged one line for each, and not one workflow
    // task of the limiter failed.
    await eventually(
      'the worker to log every dropped signal',
      () =>
        (fixture.worker.output().match(/llmLimiter: dropped a \w+ signal/g)?.length ?? 0) >= signals.length ||
        undefined,
      60_000,
    );
    assert.deepEqual(await taskFailures(limiterId), []);
    const dropped = fixture.worker.output().match(/llmLimiter: dropped a \w+ signal: [^\n]*/g) ?? [];
    assert.ok(
      dropped.every((line) => line.length < 300),
      'each drop is one short line',
    );

    // It still grants leases: another run's decision gets one.
    assert.equal((await fixture.run([final('after')])).result.stop_reason, 'success');
    const state = await fixture.client.workflow.getHandle(limiterId).query(limiterQuery);
    assert.equal(state.granted.granted, granted + 1);
    assert.equal(state.in_use.leases, 0);
    assert.equal(state.queued.requests, 0);
    assert.equal(state.paused_until, null, 'no hostile pause took hold');
    assert.deepEqual(await taskFailures(limiterId), []);
    // Dropping is deterministic: the history, hostile Signals included, replays on the same code.
    const history = await fixture.client.workflow.getHandle(limiterId).fetchHistory();
    await Worker.runReplayHistory({ ...workflowCode(undefined).options, sinks: NO_METRICS_SINKS }, history, limiterId);
  });

  it("valid-looking acquires from Temporal's CLI cannot loosen the limits nor take more than a minute's tokens", async () => {
    // The limiter runs, started by a decision with the worker's limits.
    assert.equal((await fixture.run([final('first')])).result.stop_reason, 'success');
    const handle = fixture.client.workflow.getHandle(limiterId);
    const acquire = (req: unknown) =>
      temporalCli([
        'workflow',
        'update',
        'execute',
        '-w',
        limiterId,
        '--name',
        'acquire',
        '--input',
        JSON.stringify(req),
      ]);

    // No limit at all and a 1 ms TTL: granted (one token fits), but the limits stay the start's.
    const off = { tokens_per_minute: 0, requests_per_minute: 0, max_in_flight: 0, lease_ttl_ms: 1 };
    const evil = await acquire({ id: 'evil-1', holder: 'x', tokens: 1, limits: off });
    assert.equal(evil.code, 0, evil.stderr);
    const leaseId = /lease_id\W+([\w-]+)/.exec(evil.stdout)?.[1];
    assert.ok(leaseId, `granted: ${evil.stdout}`);
    assert.deepEqual((await handle.query(limiterQuery)).limits, LIMITS, 'the start limits, not the request');
    const signalled = await temporalCli([
      'workflow',
      'signal',
      '-w',
      limiterId,
      '--name',
      'release',
      '--input',
      JSON.stringify({ lease_id: leaseId, used_tokens: 1 }),
    ]);
    assert.equal(signalled.code, 0, signalled.stderr);

    // More tokens than a minute allows: refused in one line, never queued (it would block the FIFO).
    const huge = await acquire({ id: 'evil-2', holder: 'x', tokens: 9_000_000_000, limits: LIMITS });
    assert.notEqual(huge.code, 0, `accepted: ${huge.stdout}`);
    assert.match(huge.stderr, /tokens 9000000000 exceed the limit of 100000 tokens per minute/);
    assert.ok(!/\n\s+at /.test(huge.stderr), huge.stderr);
    // Nor can the request's own limits make room for it.
    const loose = await acquire({ id: 'evil-3', holder: 'x', tokens: 9_000_000_000, limits: off });
    assert.notEqual(loose.code, 0, `accepted: ${loose.stdout}`);
    const state = await handle.query(limiterQuery);
    assert.equal(state.queued.requests, 0);
    assert.deepEqual(state.limits, LIMITS);

    // The next run is served at once, under the start limits.
    assert.equal((await fixture.run([final('after the evil acquires')])).result.stop_reason, 'success');
    assert.deepEqual(await taskFailures(limiterId), []);
  });

  it("a decision that needs more tokens than the worker's minute allows ends llm_error at once, saying why", async () => {
    const on = fixture.queue('limiter-tiny');
    const worker = fixture.startWorker(
      {
        OPENAI_MODEL: TINY_MODEL,
        AGENT_PRICES_FILE: PRICES_FILE,
        AGENT_LLM_TPM: '500', // under the system prompt plus the completion reserve
        AGENT_LLM_LEASE_TTL_SECONDS: '60',
      },
      on,
    );
    await worker.ready;
    const run = await fixture.run([final('never asked')], {}, { on });
    assert.equal(run.result.stop_reason, 'llm_error');
    const failed = (await run.handle.fetchHistory()).events?.filter((e) => e.activityTaskFailedEventAttributes);
    assert.equal(failed?.length, 1, 'one attempt: the request could never be granted');
    const failure = failed![0]!.activityTaskFailedEventAttributes!.failure!;
    assert.equal(failure.applicationFailureInfo?.type, LIMITER_TOO_LARGE);
    assert.equal(failure.applicationFailureInfo?.nonRetryable, true);
    assert.match(failure.message ?? '', /this decision's tokens \d+ exceed the limit of 500 tokens per minute/);
    assert.equal(fixture.llm.requests(run.id).length, 0, 'no LLM call went out');
  });

  it('a limiter started with a bad input, or meeting a state it cannot read, fails at once with one line', async () => {
    const start = (id: string, input: string) =>
      temporalCli([
        'workflow',
        'start',
        '--type',
        LIMITER_WORKFLOW_TYPE,
        '--task-queue',
        fixture.env.taskQueue,
        '--workflow-id',
        id,
        '--input',
        input,
      ]);
    const cases: Array<[string, string, RegExp]> = [
      ['null', 'null', /^llmLimiter input: the input must be an object \{scope, limits\}$/],
      [
        'bad-limits',
        JSON.stringify({ scope: 'x', limits: { ...LIMITS, tokens_per_minute: -1 } }),
        /^llmLimiter input: tokens_per_minute must be a non-negative integer, got -1$/,
      ],
      // A bug, as far as the code can tell: a carried state whose leases are not a list.
      ['bad-state', JSON.stringify({ scope: 'x', limits: LIMITS, state: { leases: 5 } }), /is not iterable/],
    ];
    for (const [name, input, message] of cases) {
      const id = uniqueId(`llm-limiter:bad-${name}`);
      const started = await start(id, input);
      assert.equal(started.code, 0, started.stderr);
      const handle = fixture.client.workflow.getHandle(id);
      const status = await eventually(
        `${name}: the limiter failed`,
        async () => {
          const s = (await handle.describe()).status.name;
          return s === 'RUNNING' ? undefined : s;
        },
        30_000,
      );
      assert.equal(status, 'FAILED', name);
      const failed = (await handle.fetchHistory()).events?.find((e) => e.workflowExecutionFailedEventAttributes);
      const failure = failed?.workflowExecutionFailedEventAttributes?.failure;
      assert.match(failure?.message ?? '', message, name);
      assert.ok(!(failure?.message ?? '').includes('\n'), name);
      assert.deepEqual(await taskFailures(id), [], `${name}: no workflow task failed on the way`);
    }
  });
});
