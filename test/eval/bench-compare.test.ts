// `npm run bench-compare` (bench/compare.ts): the figures it reads from two commits' bench reports,
// the medians over rounds and the ratio this/other, and its refusal of a bad command line.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { comparisonRows, figuresOf, parseCompareArgs } from '../../bench/compare';
import type { Report } from '../../bench/report';

/** A report with the figures a comparison reads (the rest of a real one is not looked at). */
function report(f: { overhead: number; workerCpu: number; runsPerSec: number; start: number; cli: number }): Report {
  return {
    overhead: [
      { latencyMs: 0, overheadPerStepMs: { median: f.overhead }, cpuPerStepMs: { worker: f.workerCpu, server: 20 } },
    ],
    throughput: [
      {
        concurrency: 100,
        runsPerSec: f.runsPerSec,
        stepsPerSec: f.runsPerSec * 5,
        cpuPerStepMs: { worker: 30, server: 25 },
      },
    ],
    workerStart: { medianMs: f.start, cpuMs: { median: f.start / 2 } },
    cli: { args: ['list', '-o', 'json'], medianMs: f.cli },
  } as unknown as Report;
}

const row = (rows: string[][], name: string) => rows.find((r) => r[0] === name);

describe('bench-compare', () => {
  it('gives the median over rounds of each side and the ratio this/other', () => {
    const other = [report({ overhead: 80, workerCpu: 40, runsPerSec: 5, start: 2400, cli: 900 })];
    const mine = [
      report({ overhead: 60, workerCpu: 30, runsPerSec: 9, start: 1000, cli: 500 }),
      report({ overhead: 70, workerCpu: 20, runsPerSec: 11, start: 1400, cli: 300 }),
      report({ overhead: 99, workerCpu: 25, runsPerSec: 10, start: 1200, cli: 400 }),
    ];
    const rows = comparisonRows(other, mine);
    assert.deepEqual(row(rows, 'overhead/step @0 ms LLM (ms)'), [
      'overhead/step @0 ms LLM (ms)',
      '80.0',
      '70.0',
      '0.88',
    ]);
    assert.deepEqual(row(rows, 'throughput C=100 (runs/s)'), ['throughput C=100 (runs/s)', '5.0', '10.0', '2.00']);
    assert.deepEqual(row(rows, 'worker cold start, spawn to first poll (ms)')?.slice(1), ['2400.0', '1200.0', '0.50']);
    assert.deepEqual(row(rows, 'CLI cold start, agent list -o json (ms)')?.slice(1), ['900.0', '400.0', '0.44']);
  });

  it('a figure only one side measured shows a dash, never a ratio', () => {
    const other = { ...report({ overhead: 80, workerCpu: 40, runsPerSec: 5, start: 2400, cli: 900 }), cli: undefined };
    const rows = comparisonRows(
      [other],
      [report({ overhead: 60, workerCpu: 30, runsPerSec: 9, start: 1000, cli: 500 })],
    );
    assert.deepEqual(row(rows, 'CLI cold start, agent list -o json (ms)')?.slice(1), ['—', '500.0', '—']);
    assert.equal(figuresOf({} as Report).size, 0);
  });

  it("compares the cancel phase's figures, the CLI's `recorded` one only where a report has it", () => {
    const summary = (median: number) => ({ median });
    const cancel = (closed: number, recorded?: number) =>
      ({
        cancel: {
          api: { abortMs: summary(200), closedMs: summary(250), failed: 0 },
          cli: {
            abortMs: summary(closed - 20),
            closedMs: summary(closed),
            ...(recorded === undefined ? {} : { requestedMs: summary(recorded) }),
            failed: 0,
          },
          trials: [],
        },
      }) as unknown as Report;
    const rows = comparisonRows([cancel(1000)], [cancel(800, 600), cancel(900, 500)]);
    assert.deepEqual(row(rows, 'cancel → run closed, `agent cancel` (ms)')?.slice(1), ['1000.0', '850.0', '0.85']);
    assert.deepEqual(row(rows, 'cancel → recorded by the server, `agent cancel` (ms)')?.slice(1), ['—', '550.0', '—']);
    assert.deepEqual(row(rows, 'cancel → run closed, client API (ms)')?.slice(1), ['250.0', '250.0', '1.00']);
  });

  it('refuses a command line without exactly one commit or with a bad --rounds, and passes what follows -- to the bench', () => {
    assert.deepEqual(parseCompareArgs(['eeaf7fb', '--rounds', '3', '--', '--crash-trials', '1']), {
      commit: 'eeaf7fb',
      rounds: 3,
      phases: 'overhead,throughput,start,cli',
      benchArgs: ['--crash-trials', '1'],
    });
    fc.assert(
      fc.property(
        fc.oneof(fc.constant(''), fc.constant('0'), fc.constant('-1'), fc.constant('1.5'), fc.string()),
        (rounds) => {
          fc.pre(!/^[1-9]\d*$/.test(rounds));
          assert.throws(() => parseCompareArgs(['HEAD~1', `--rounds=${rounds}`]), /usage: npm run bench-compare/);
        },
      ),
    );
    assert.throws(() => parseCompareArgs([]), /usage/);
    assert.throws(() => parseCompareArgs(['a', 'b']), /usage/);
    assert.throws(() => parseCompareArgs(['a', '--frobnicate']), /Unknown option/);
  });
});
