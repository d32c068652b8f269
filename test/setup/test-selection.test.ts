// What `npm test` runs (scripts/test-selection.ts): with no argument the in-process tests and one
// end-to-end file per headline guarantee; `--all` the whole suite, which CI runs; the PostgreSQL
// profile unchanged; arguments select from the whole suite. Checked on the repository's own test
// files, and as properties over made-up file lists and arguments.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import {
  CORE_E2E,
  isE2e,
  needsPostgres,
  parseTestArgs,
  POSTGRES_PROFILE,
  RUNS_ALONE,
  runsAlone,
  selectTests,
  sharedConcurrency,
} from '../../scripts/test-selection';
import type { TestArgs } from '../../scripts/test-selection';
import { REPO_ROOT } from '../helpers/harness';

function testFiles(dir = 'test'): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? testFiles(`${dir}/${e.name}`) : e.name.endsWith('.test.ts') ? [`${dir}/${e.name}`] : [],
    )
    .sort();
}

function args(argv: string[]): TestArgs {
  const parsed = parseTestArgs(argv);
  assert.ok(!('error' in parsed), `parsed ${argv.join(' ')}`);
  return parsed;
}

describe('npm test: the core set and --all', () => {
  const files = testFiles();

  it('the files that run alone exist, and every file that cancels stuck runs in the shared namespace is one', () => {
    for (const { file, guarantee } of RUNS_ALONE) {
      assert.ok(files.includes(file) && isE2e(file), `${file} exists`);
      assert.ok(guarantee.length > 0);
      assert.ok(runsAlone(file) && runsAlone(`dist/${file.replace(/\.ts$/, '.js')}`), file);
    }
    // `cancel --stuck` acts on every run of its namespace: beside another file it would cancel that file's runs.
    const stuck = files.filter((f) => isE2e(f) && readFileSync(path.join(REPO_ROOT, f), 'utf8').includes("'--stuck'"));
    assert.ok(stuck.length >= 4, stuck.join(' '));
    for (const f of stuck) {
      const src = readFileSync(path.join(REPO_ROOT, f), 'utf8');
      assert.ok(runsAlone(f) || /ensureNamespace\(|namespace: /.test(src), `${f}: cancels --stuck beside other files`);
    }
  });

  it('the other files run two at a time on the dev server, one at a time on PostgreSQL, or AGENT_TEST_CONCURRENCY', () => {
    assert.equal(sharedConcurrency('dev', {}), 2);
    assert.equal(sharedConcurrency('postgres', {}), 1);
    assert.equal(sharedConcurrency('dev', { AGENT_TEST_CONCURRENCY: '1' }), 1);
    assert.equal(sharedConcurrency('postgres', { AGENT_TEST_CONCURRENCY: '3' }), 3);
    for (const bad of ['0', '9', '1.5', 'two', ' '])
      assert.match(
        (sharedConcurrency('dev', { AGENT_TEST_CONCURRENCY: bad }) as { error: string }).error,
        /^AGENT_TEST_CONCURRENCY: expected 1 to 8, got /,
      );
  });

  it('the core set is one end-to-end file per guarantee, each a file that runs on the dev server', () => {
    assert.ok(CORE_E2E.length > 0);
    assert.equal(new Set(CORE_E2E.map((c) => c.file)).size, CORE_E2E.length, 'no file twice');
    for (const { file, guarantee } of CORE_E2E) {
      assert.ok(files.includes(file), `${file} exists`);
      assert.ok(isE2e(file) && !needsPostgres(file) && !file.includes('.browser.'), `${file}: a dev-server e2e file`);
      assert.ok(guarantee.length > 0);
    }
  });

  it('with no argument: every in-process test and the core set, and no other end-to-end file', () => {
    const chosen = selectTests(files, args([]));
    assert.deepEqual(
      chosen,
      files.filter((f) => !isE2e(f) || CORE_E2E.some((c) => c.file === f)),
    );
    assert.ok(chosen.length < files.length, 'fewer files than the whole suite');
  });

  it('--all: every file the dev server can run; with --server postgres, every file', () => {
    assert.deepEqual(
      selectTests(files, args(['--all'])),
      files.filter((f) => !needsPostgres(f)),
    );
    assert.deepEqual(selectTests(files, args(['--all', '--server', 'postgres'])), files);
  });

  it('--server postgres alone: the durability profile, as before', () => {
    const chosen = selectTests(files, args(['--server', 'postgres']));
    assert.deepEqual(
      chosen,
      files.filter((f) => POSTGRES_PROFILE.some((p) => f.includes(p))),
    );
    for (const name of ['worker-crash.e2e', 'server-restart.e2e', 'cancel-faults.e2e', 'replay.test'])
      assert.ok(
        chosen.some((f) => f.includes(name)),
        name,
      );
    assert.ok(chosen.some(needsPostgres), 'the *.postgres.e2e files');
  });

  it('kinds and path substrings select from the whole suite, not from the core set', () => {
    const e2e = selectTests(files, args(['--e2e']));
    assert.deepEqual(
      e2e,
      files.filter((f) => isE2e(f) && !needsPostgres(f)),
    );
    assert.ok(e2e.length > CORE_E2E.length);
    assert.deepEqual(
      selectTests(files, args(['fault-matrix'])),
      ['test/durability/fault-matrix.e2e.test.ts'],
      'a file outside the core set',
    );
  });

  it('test/README.md names every core file with its guarantee, and says what --all is', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'test/README.md'), 'utf8');
    for (const { file } of CORE_E2E) assert.ok(readme.includes(`\`${file.replace(/^test\//, '')}\``), file);
    assert.match(readme, /npm test -- --all/);
  });

  it('CI runs the whole suite (--all) and the PostgreSQL profile', () => {
    const ci = readFileSync(path.join(REPO_ROOT, '.ci/run'), 'utf8');
    assert.match(ci, /^AGENT_REQUIRE_BROWSER=1 npm test -- --all\b/m);
    assert.match(ci, /^npm test -- --server postgres$/m);
  });

  it('an unknown server kind is one line', () => {
    assert.deepEqual(parseTestArgs(['--server', 'mysql']), {
      error: '--server: expected dev or postgres, got "mysql"',
    });
  });
});

describe('npm test selection (properties)', () => {
  const segment = fc.constantFrom('loop', 'durability', 'setup', 'refunds');
  const name = fc.constantFrom(
    'a.test.ts',
    'b.e2e.test.ts',
    'c.postgres.e2e.test.ts',
    'd.browser.e2e.test.ts',
    'worker-crash.e2e.test.ts',
    'agent.e2e.test.ts',
    'hung-worker.e2e.test.ts',
  );
  const fileList = fc
    .uniqueArray(
      fc.tuple(segment, name).map(([d, n]) => `test/${d}/${n}`),
      { maxLength: 20 },
    )
    .map((l) => [...l].sort());
  const argv = fc.array(
    fc.oneof(
      fc.constantFrom('--all', '--e2e', '--unit', '--browser', '--server=dev', '--server=postgres'),
      fc.constantFrom('loop', 'e2e', 'crash', 'zzz', '.test'),
    ),
    { maxLength: 4 },
  );

  it('selects a subsequence of the files; never a PostgreSQL-only file on the dev server; --all is the largest', () => {
    fc.assert(
      fc.property(fileList, argv, (files, av) => {
        const a = args(av);
        const chosen = selectTests(files, a);
        let at = 0;
        for (const f of chosen) {
          at = files.indexOf(f, at);
          assert.ok(at >= 0, `${f} is one of the files, in order`);
        }
        if (a.server === 'dev') assert.ok(!chosen.some(needsPostgres));
        const everything = selectTests(files, { ...a, all: true, kinds: [], filters: [] });
        assert.ok(chosen.every((f) => everything.includes(f)));
        for (const f of chosen) {
          if (a.filters.length > 0)
            assert.ok(
              a.filters.some((s) => f.includes(s)),
              `${f} matches a filter`,
            );
        }
      }),
    );
  });
});
