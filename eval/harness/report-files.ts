// Writing a suite's report and deciding the exit code, the same for every suite: report.json and
// report.html in the output folder, the comparison with a previous report printed, and exit code 1
// when the suite failed or the comparison found a regression.
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { compareReports, comparisonLines } from './compare';
import type { ComparableReport, Comparison } from './compare';

interface WrittenReport extends ComparableReport {
  ok: boolean;
  comparison?: Comparison;
}

/** Adds the comparison with `previous` (read from `file`) to the report. */
export function attachComparison<R extends WrittenReport>(report: R, previous: ComparableReport, file: string): R {
  report.comparison = compareReports(previous, report, file);
  return report;
}

export function writeReportFiles<R extends WrittenReport>(out: string, report: R, html: (report: R) => string): void {
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(out, 'report.html'), html(report));
}

/** The comparison's lines, for the terminal (none without --compare). */
export function comparisonOutput(report: WrittenReport): string[] {
  return report.comparison ? comparisonLines(report.comparison) : [];
}

/** 0 when the suite passed and nothing regressed since the compared report; else 1. */
export function reportExitCode(report: WrittenReport): number {
  return report.ok && (report.comparison?.regressions.length ?? 0) === 0 ? 0 : 1;
}

/** "PASS: report in …" / "FAIL: …" / "FAIL (2 regressions since …): …". */
export function verdictLine(report: WrittenReport, out: string): string {
  const where = `report in ${path.relative(process.cwd(), out) || '.'}/report.html and report.json`;
  if (!report.ok) return `FAIL: ${where}`;
  const regressions = report.comparison?.regressions.length ?? 0;
  return regressions === 0
    ? `PASS: ${where}`
    : `FAIL (${regressions} regressions since ${report.comparison!.against.file}): ${where}`;
}

/** What a suite shows at its end besides the shared parts: its HTML, its table, its own lines. */
export interface ReportShow<R> {
  html: (report: R) => string;
  table: (report: R) => string;
  lines: string[];
}

/**
 * The end of every suite: report.json and report.html written; on stdout the table, the comparison,
 * the suite's own lines and the verdict. Returns the exit code.
 */
export function finishReport<R extends WrittenReport>(out: string, report: R, show: ReportShow<R>): number {
  writeReportFiles(out, report, show.html);
  console.log(show.table(report));
  for (const line of comparisonOutput(report)) console.log(line);
  for (const line of show.lines) console.log(line);
  console.log(verdictLine(report, out));
  return reportExitCode(report);
}
