// Error bars of the report's rates. A rate measured over n trials is a binomial proportion, so its
// standard error is sqrt(p(1-p)/n): with k = 3 trials of 23 scenarios a 5-point move is noise, and
// the report says so beside every rate instead of leaving readers to guess.

/** sqrt(p(1-p)/n); null when nothing was measured (n = 0 or no value). */
export function standardError(p: number | null, n: number): number | null {
  if (p === null || n <= 0) return null;
  return Math.sqrt((p * (1 - p)) / n);
}

/** "75.0% ± 12.5% (n=12)"; "- (n=0)" when nothing was measured. */
export function formatRate(p: number | null, n: number): string {
  if (p === null || n <= 0) return `- (n=${n})`;
  return `${percent(p)} ± ${percent(standardError(p, n)!)} (n=${n})`;
}

const percent = (x: number) => `${(x * 100).toFixed(1)}%`;
