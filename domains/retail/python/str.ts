/**
 * Python's str.lower(): both it and String.prototype.toLowerCase apply Unicode's full default case mapping
 * (with the final-sigma rule); they differ only where their Unicode versions do (Python 3.11: Unicode 14).
 */
export function pyLower(s: string): string {
  return s.toLowerCase();
}
