// Found by an adversary: `--compare FILE` promises a one-line error and exit code 2 for a previous report it
// cannot compare with, read before anything runs. A report whose trial table or rates hold a null
// passes the check made before the suite and then throws a TypeError once the suite has run
// (eval/main.ts: exit 1, "Cannot read properties of null", no report written); a numeric date
// throws while report.html is written.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompareError, compareReports, comparisonLines, loadPreviousReport } from '../../eval/harness/compare';
import { comparisonHtml } from '../../eval/harness/report-sections-html';
import type { ComparableReport } from '../../eval/harness/compare';

const current: ComparableReport = {
  metadata: { suite: 'scenarios', date: '2026-12-04', commit: 'abc', model: 'scripted' },
  rates: [{ phase: 'baseline', name: 'success_rate', value: 1, n: 2, se: 0, better: 'higher' }],
  trial_table: [{ phase: 'baseline', scenario: 'refund', passed: true }],
} as ComparableReport;

/** Loading then comparing either refuses the file up front (CompareError) or compares without throwing. */
function loadThenCompare(previous: unknown): 'refused' | 'compared' {
  const file = join(mkdtempSync(join(tmpdir(), 'adv-compare-')), 'previous.json');
  writeFileSync(file, JSON.stringify(previous));
  let loaded: ComparableReport;
  try {
    loaded = loadPreviousReport(file, 'scenarios');
  } catch (err) {
    assert.ok(err instanceof CompareError, `not a CompareError: ${String(err)}`);
    return 'refused';
  }
  // Accepted before the suite ran: the comparison after it must not throw.
  const comparison = compareReports(loaded, current, file);
  comparisonLines(comparison);
  comparisonHtml(comparison);
  return 'compared';
}

const metadata = { suite: 'scenarios', date: '2026-12-01', commit: 'old', model: 'scripted' };

describe('--compare with a hostile previous report', () => {
  it('a null row in the trial table is refused up front, not a TypeError after the suite', () => {
    assert.doesNotThrow(() => loadThenCompare({ metadata, rates: [], trial_table: [null] }));
  });

  it('a null entry in the rates is refused up front, not a TypeError after the suite', () => {
    assert.doesNotThrow(() => loadThenCompare({ metadata, rates: [null], trial_table: [] }));
  });

  it('a date that is a number is refused up front, not a TypeError while writing report.html', () => {
    assert.doesNotThrow(() =>
      loadThenCompare({ metadata: { ...metadata, date: 20261201 }, rates: [], trial_table: [] }),
    );
  });
});
