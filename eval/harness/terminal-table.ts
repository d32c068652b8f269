// What every suite prints on the terminal: a figure table with a column per phase, and a line per
// finished trial.
import type { PhaseName } from './phases';

/** The phases a report has, in the order they ran. */
export function phasesIn(phases: Partial<Record<PhaseName, unknown>>): PhaseName[] {
  return (['baseline', 'chaos'] as const).filter((p) => phases[p]);
}

/** The rows as text columns, each as wide as its widest cell. */
export function alignedColumns(rows: readonly string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')).join('\n');
}

/** "[baseline  3/12] pass": the start of a finished trial's progress line. */
export function trialLineStart(phase: string, done: number, total: number, passed: boolean): string {
  return `[${phase} ${String(done).padStart(String(total).length)}/${total}] ${passed ? 'pass' : 'FAIL'}`;
}
