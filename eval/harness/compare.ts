// `--compare previous.json`: what changed since an earlier report of the same suite. A regression is
// a scenario that passed every trial before and fails one now, or a rate that moved the wrong way
// by more than the standard error of the difference, sqrt(se_before² + se_now²) (a smaller move is
// within the noise of k trials and is not reported). Improvements are the same, the other way.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { formatRate } from './standard-error';
import type { RateEntry, TrialRow } from './trial-table';
import type { RunMetadata } from './run-metadata';

/** The parts of a report a comparison reads (both suites' reports have them). */
export interface ComparableReport {
  metadata: Pick<RunMetadata, 'suite' | 'date' | 'commit' | 'model'>;
  rates: RateEntry[];
  trial_table: Array<Pick<TrialRow, 'phase' | 'scenario' | 'passed'>>;
}

export interface Change {
  kind: 'scenario' | 'rate';
  phase: string;
  name: string;
  before: string;
  now: string;
}

export interface Comparison {
  against: { file: string; date: string; commit: string | null; model: string };
  regressions: Change[];
  improvements: Change[];
  /** Scenarios (phase/name) present in only one of the two reports: not compared. */
  only_before: string[];
  only_now: string[];
}

/** A previous report that cannot be compared with: one line, naming the file. */
export class CompareError extends Error {}

export function loadPreviousReport(file: string, suite: string): ComparableReport {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new CompareError(`--compare ${file}: ${e.code === 'ENOENT' ? 'no such file' : `not JSON (${e.message})`}`);
  }
  const r0 = parsed as Partial<ComparableReport> | null;
  if (!r0 || typeof r0 !== 'object' || !Array.isArray(r0.trial_table) || !Array.isArray(r0.rates))
    throw new CompareError(
      `--compare ${file}: not a report with a trial table and rates (made by an older version, or not a report)`,
    );
  const suiteOf = (r0.metadata as { suite?: unknown } | undefined)?.suite;
  if (typeof suiteOf === 'string' && suiteOf !== suite)
    throw new CompareError(`--compare ${file}: a report of suite "${suiteOf.slice(0, 40)}", this run is "${suite}"`);
  const checked = COMPARABLE.safeParse(parsed);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw new CompareError(
      `--compare ${file}: not a report this version can compare with (${issue.path.join('.') || 'the document'}: ${issue.message}; made by an older version, or not a report)`,
    );
  }
  return checked.data as ComparableReport;
}

/** What a comparison reads, checked field by field before the suite runs (extra fields are kept, unread). */
const COMPARABLE = z.object({
  metadata: z.object({
    suite: z.string(),
    date: z.string(),
    commit: z.string().nullable().optional(),
    model: z.string(),
  }),
  rates: z.array(
    z.object({
      phase: z.string(),
      name: z.string(),
      value: z.number().finite().nullable(),
      n: z.number().int().nonnegative(),
      se: z.number().finite().nonnegative().nullable(),
      better: z.enum(['higher', 'lower']),
    }),
  ),
  trial_table: z.array(z.object({ phase: z.string(), scenario: z.string(), passed: z.boolean() })),
});

export function compareReports(previous: ComparableReport, current: ComparableReport, file: string): Comparison {
  const regressions: Change[] = [];
  const improvements: Change[] = [];
  const before = passCounts(previous.trial_table);
  const now = passCounts(current.trial_table);
  for (const [key, b] of before) {
    const n = now.get(key);
    if (!n) continue;
    const [phase, name] = splitKey(key);
    const change: Change = {
      kind: 'scenario',
      phase,
      name,
      before: `${b.passed}/${b.n} passed`,
      now: `${n.passed}/${n.n} passed`,
    };
    if (b.passed === b.n && n.passed < n.n) regressions.push(change);
    else if (b.passed < b.n && n.passed === n.n) improvements.push(change);
  }
  const previousRates = new Map(previous.rates.map((r) => [`${r.phase}/${r.name}`, r]));
  for (const r of current.rates) {
    const p = previousRates.get(`${r.phase}/${r.name}`);
    if (!p || p.value === null || r.value === null) continue;
    const gain = (r.better === 'higher' ? 1 : -1) * (r.value - p.value);
    const noise = Math.sqrt((p.se ?? 0) ** 2 + (r.se ?? 0) ** 2);
    // A move no larger than the noise is not a change; floating point aside.
    if (Math.abs(gain) <= noise + 1e-9) continue;
    const change: Change = {
      kind: 'rate',
      phase: r.phase,
      name: r.name,
      before: formatRate(p.value, p.n),
      now: formatRate(r.value, r.n),
    };
    (gain < 0 ? regressions : improvements).push(change);
  }
  return {
    against: {
      file,
      date: previous.metadata.date,
      commit: previous.metadata.commit ?? null,
      model: previous.metadata.model,
    },
    regressions,
    improvements,
    only_before: [...before.keys()].filter((k) => !now.has(k)),
    only_now: [...now.keys()].filter((k) => !before.has(k)),
  };
}

/** The terminal's lines: a summary, then one line per change. */
export function comparisonLines(c: Comparison): string[] {
  const head =
    `compared with ${c.against.file} (${c.against.date}, commit ${c.against.commit ?? 'unknown'}, ${c.against.model}): ` +
    `${c.regressions.length} regressions, ${c.improvements.length} improvements` +
    (c.only_before.length || c.only_now.length
      ? ` (${c.only_before.length} scenarios only before, ${c.only_now.length} only now: not compared)`
      : '');
  return [
    head,
    ...c.regressions.map((x) => `regression: ${changeText(x)}`),
    ...c.improvements.map((x) => `improvement: ${changeText(x)}`),
  ];
}

export function changeText(x: Change): string {
  return `${x.phase}/${x.name}: ${x.before} before, ${x.now} now`;
}

function passCounts(rows: ComparableReport['trial_table']): Map<string, { passed: number; n: number }> {
  const out = new Map<string, { passed: number; n: number }>();
  for (const r of rows) {
    const key = `${r.phase}/${r.scenario}`;
    const c = out.get(key) ?? { passed: 0, n: 0 };
    c.n++;
    if (r.passed) c.passed++;
    out.set(key, c);
  }
  return out;
}

function splitKey(key: string): [string, string] {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
}
