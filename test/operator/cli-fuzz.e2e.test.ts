// Fuzzing the operator CLI's arguments with fast-check: whatever argv it gets, `agent` answers
// with usage/output and exit 0, or with exactly one line on stderr ("agent: ...") and a non-zero
// exit; never a stack trace, never a hang, never an unhandled rejection. In process through
// main(argv, io) for volume, against a closed port and against the real dev server (read-only
// commands), and as real processes for the exit code itself.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import * as path from 'node:path';
import * as fc from 'fast-check';
import { main } from '../../cli/cli';
import { DIST, uniqueId } from '../helpers/harness';
import { newKey } from '../helpers/codec';

const COMMAND_NAMES = ['run', 'status', 'result', 'list', 'cancel', 'help', 'watch', 'trace', 'limits'];
const FLAGS = [
  '--user-id',
  '--max-steps',
  '--max-tool-calls',
  '--max-seconds',
  '--max-tokens',
  '--allow',
  '--id',
  '--wait',
  '--json',
  '--limit',
  '--reason',
  '--follow',
  '--waiting',
  '--waiting=',
  'approval,none',
  '--help',
  '-h',
  '--',
  '-',
  '--=',
  '---',
  '--json=yes',
  '--limit=0',
  '--approval-timeout',
  '--no-wait',
  '--terminate',
  '--wait=1s',
  '-o',
  '--output',
  '-ojson',
  '-o=jsonl',
  'json',
  'jsonl',
  '--jsonl',
  '--version',
  '-v',
  '--address',
  '--namespace',
  '--profile',
];
const hostile = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  '\n',
  'a\nb',
  '\u202e',
  '😀',
  '\ud800',
  '-1',
  '0',
  '1e3',
  '0x10',
  '9'.repeat(400),
  'NaN',
  'Infinity',
  '42',
  '3.5',
  ',,',
  'a,b,,c',
  '"',
  "'",
  '$(id)',
  '`id`',
  '%s%n',
  '../../etc/passwd',
);
const token = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...COMMAND_NAMES) },
  { weight: 4, arbitrary: fc.constantFrom(...FLAGS) },
  { weight: 3, arbitrary: hostile },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...FLAGS).chain((f) => fc.string({ maxLength: 20 }).map((v) => `${f}=${v}`)),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 200_000 }).map((n) => 'x'.repeat(n)) },
);
const argvArb = fc.oneof(
  fc.array(token, { maxLength: 8 }),
  fc.tuple(fc.constantFrom(...COMMAND_NAMES), fc.array(token, { maxLength: 7 })).map(([c, rest]) => [c, ...rest]),
);

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function callMain(argv: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const io = { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } };
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    main(argv, io, env),
    new Promise<never>(
      (_, reject) =>
        (timer = setTimeout(
          () => reject(new Error(`agent ${JSON.stringify(argv).slice(0, 300)} did not finish in 20 s`)),
          20_000,
        )),
    ),
  ]).finally(() => clearTimeout(timer));
  return { code, stdout, stderr };
}

const STACK_FRAME = /\n\s+at |\bat .*\(.*:\d+:\d+\)|Error: .*\n.*node:internal/;

/** The deprecated --json/--jsonl earn one line of their own on stderr, whatever else happens. */
const DEPRECATION = /^agent: --jsonl? is deprecated; use -o jsonl?\n/;

function assertWellBehaved(argv: string[], outcome: Outcome): void {
  const out = { ...outcome, stderr: outcome.stderr.replace(DEPRECATION, '') };
  const what = `agent ${JSON.stringify(argv).slice(0, 300)} -> exit ${out.code}, stderr ${JSON.stringify(out.stderr.slice(0, 300))}`;
  assert.ok(Number.isInteger(out.code) && out.code >= 0 && out.code <= 255, what);
  assert.doesNotMatch(out.stderr, STACK_FRAME, what);
  assert.doesNotMatch(out.stdout, STACK_FRAME, what);
  if (out.code === 0) {
    assert.equal(out.stderr, '', what);
    assert.ok(out.stdout.length > 0, what);
    return;
  }
  const lines = out.stderr.split('\n');
  assert.equal(lines.length, 2, `exactly one line on stderr: ${what}`);
  assert.equal(lines[1], '', what);
  assert.match(lines[0]!, /^agent: \S/, what);
  assert.ok(lines[0]!.length <= 1000, `a clear, bounded message (${lines[0]!.length} chars): ${what}`);
}

let closedAddress: string;
const unhandled: unknown[] = [];
const onUnhandled = (err: unknown) => unhandled.push(err);

before(async () => {
  // A port that was free a moment ago: nothing listens there.
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  closedAddress = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  process.on('unhandledRejection', onUnhandled);
});

after(() => {
  process.off('unhandledRejection', onUnhandled);
});

describe('agent CLI: usage errors, --version, -o', () => {
  const env = { TEMPORAL_ADDRESS: '127.0.0.1:1' };

  it('an unknown flag, a bad -o or a missing value is exit 2 with one line naming it, before any connection', async () => {
    for (const [argv, message] of [
      [['list', '--bogus'], /^agent: unknown flag --bogus; see `agent help list`$/],
      [['status', 'x', '-q'], /^agent: unknown flag -q; see `agent help status`$/],
      [['--bogus', 'list'], /^agent: unknown flag --bogus before the command; see `agent help`$/],
      [['list', '-o', 'yaml'], /^agent: -o must be text, json or jsonl, got "yaml"; see `agent help list`$/],
      [['list', '--address'], /^agent: --address needs a value; see `agent help list`$/],
      [['list', '--limit', '--json'], /^agent: --limit needs a value; see `agent help list`$/],
      [['list', '-o', 'json', '--json'], /^agent: give -o json or --json, not both; see `agent help list`$/],
    ] as const) {
      const out = await callMain([...argv], env);
      assert.equal(out.code, 2, `${argv.join(' ')}: ${out.stderr}`);
      assert.equal(out.stdout, '');
      assert.match(out.stderr.replace(/\n$/, ''), message);
      assertWellBehaved([...argv], out);
    }
  });

  it("--version prints this package's version and the SDK's, as text or JSON", async () => {
    const text = await callMain(['--version'], env);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /^agent \d+\.\d+\.\d+ \(Temporal TypeScript SDK 1\.\d+\.\d+, Node\.js \d+/);
    const json = await callMain(['--version', '-o', 'json'], env);
    const doc = JSON.parse(json.stdout) as Record<string, string>;
    assert.deepEqual(Object.keys(doc), ['version', 'sdk_version', 'node_version']);
    assert.equal(
      doc.sdk_version,
      (JSON.parse(readFileSync(require.resolve('@temporalio/client/package.json'), 'utf8')) as { version: string })
        .version,
    );
  });

  it('--json still works, with one deprecation line on stderr', async () => {
    const out = await callMain(['list', '--query', '--json'], env);
    assert.equal(out.code, 0);
    assert.equal(out.stderr, 'agent: --json is deprecated; use -o json\n');
    assert.equal(JSON.parse(out.stdout).query, "WorkflowType = 'reactAgent'");
  });
});

describe('agent CLI under fuzzed arguments', () => {
  it('no server reachable: every input ends well (400 argv arrays)', async () => {
    const env = { TEMPORAL_ADDRESS: closedAddress, TEMPORAL_NAMESPACE: 'default' };
    await fc.assert(
      fc.asyncProperty(argvArb, async (argv) => assertWellBehaved(argv, await callMain(argv, env))),
      { numRuns: 400 },
    );
  });

  it('a broken codec configuration is one clear line too', async () => {
    const env = {
      TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? closedAddress,
      AGENT_CODEC_KEYS: `k1:${newKey().slice(0, 20)}`,
    };
    const out = await callMain(['status', 'some-run'], env);
    assertWellBehaved(['status', 'some-run'], out);
    if (process.env.TEMPORAL_ADDRESS) assert.match(out.stderr, /AGENT_CODEC_KEYS: key "k1" must be 32 bytes/);
  });

  it('a huge run id is refused before any call, by every command that takes one (the server would echo it and hang)', async () => {
    assert.ok(process.env.TEMPORAL_ADDRESS, 'run with `npm test`');
    const huge = 'x'.repeat(70_000);
    for (const argv of [
      ['cancel', huge],
      ['cancel', huge, '--terminate'],
      ['status', huge],
      ['result', huge],
    ]) {
      const out = await callMain(argv, process.env);
      assertWellBehaved(argv, out);
      assert.notEqual(out.code, 0);
      assert.match(out.stderr, /at most 1000 characters/);
    }
  });

  it('against the real dev server, read-only commands (150 argv arrays)', async () => {
    assert.ok(process.env.TEMPORAL_ADDRESS, 'run with `npm test`');
    const env = { ...process.env, TEMPORAL_TASK_QUEUE: uniqueId('cli-fuzz') };
    const readOnly = fc
      .tuple(fc.constantFrom('status', 'result', 'cancel', 'list', 'help', 'limits'), fc.array(token, { maxLength: 6 }))
      .map(([c, rest]) => [c, ...rest.filter((t) => !t.startsWith('--wait') && !t.startsWith('--follow'))]);
    await fc.assert(
      fc.asyncProperty(readOnly, async (argv) => assertWellBehaved(argv, await callMain(argv, env))),
      { numRuns: 150 },
    );
  });

  it('as real processes: the exit code and stderr are what main said (25 argv arrays)', () => {
    const entry = path.join(DIST, 'cli', 'cli.js');
    // argv cannot carry NUL bytes into a process, and the OS caps one argument at 128 KiB.
    const samples = fc.sample(
      argvArb.filter((a) => a.every((t) => !t.includes('\u0000') && t.length < 100_000)),
      { numRuns: 25 },
    );
    for (const argv of samples) {
      const r = spawnSync(process.execPath, [entry, ...argv], {
        env: { PATH: process.env.PATH, TEMPORAL_ADDRESS: closedAddress },
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(r.error, undefined, `spawn failed for ${JSON.stringify(argv).slice(0, 200)}`);
      assertWellBehaved(argv, { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr });
    }
  });

  it('no unhandled rejection happened along the way', () => {
    assert.deepEqual(unhandled, []);
  });
});
