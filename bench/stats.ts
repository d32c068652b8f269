// Small statistics and formatting helpers for the benchmark.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Median, interpolated between the two middle values of an even count. */
export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Nearest-rank percentile (p in 0..100): with fewer than 20 samples, p95 is the maximum. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * s.length));
  return s[Math.min(rank, s.length) - 1]!;
}

export interface Summary {
  n: number;
  median: number;
  p95: number;
  min: number;
  max: number;
}

export function summarize(xs: number[]): Summary {
  return {
    n: xs.length,
    median: median(xs),
    p95: percentile(xs, 95),
    min: xs.length ? Math.min(...xs) : NaN,
    max: xs.length ? Math.max(...xs) : NaN,
  };
}

export function ms(x: number, digits = 1): string {
  if (!Number.isFinite(x)) return 'n/a';
  if (Math.abs(x) >= 10_000) return `${(x / 1000).toFixed(1)} s`;
  return `${x.toFixed(Math.abs(x) >= 100 ? 0 : digits)} ms`;
}

export function secs(x: number): string {
  return Number.isFinite(x) ? `${(x / 1000).toFixed(2)} s` : 'n/a';
}

export function bytes(x: number): string {
  if (!Number.isFinite(x)) return 'n/a';
  if (x >= 1024 * 1024) return `${(x / 1024 / 1024).toFixed(1)} MiB`;
  if (x >= 1024) return `${(x / 1024).toFixed(1)} KiB`;
  return `${Math.round(x)} B`;
}

export function signed(x: number, unit: (v: number) => string): string {
  if (!Number.isFinite(x)) return 'n/a';
  return x >= 0 ? `+${unit(x)}` : `−${unit(-x)}`;
}

/** A deterministic PRNG (mulberry32) so random waits are the same from one bench run to the next. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function markdownTable(header: string[], rows: string[][]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

/** Fixed-width text table for the terminal. */
export function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

// ---- process accounting (worker and in-process loop report their own) ----

export interface WorkerStats {
  type: 'stats';
  /** microseconds of CPU since the process started */
  cpuUserUs: number;
  cpuSystemUs: number;
  rssBytes: number;
  /** peak RSS of the process so far */
  maxRssBytes: number;
  heapUsedBytes: number;
}

let clockTicks: number | undefined;
/** utime+stime of a process in ms, from /proc (for processes we cannot instrument); NaN where there is no /proc. */
export function procCpuMs(pid: number): number {
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
  } catch {
    return NaN;
  }
}

/**
 * CPU of a process and its children in ms: its utime+stime, the times of the children it has
 * reaped (cutime+cstime), and those of its live children (PostgreSQL's postmaster and backends).
 */
export function procTreeCpuMs(parent: number): number {
  let total = 0;
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const pid = Number(entry);
        if (pid !== parent && Number(fields[1]) !== parent) continue;
        const ticks = [11, 12, ...(pid === parent ? [13, 14] : [])].reduce((sum, i) => sum + Number(fields[i]), 0);
        total += (ticks * 1000) / clockTicks;
      } catch {
        /* exited meanwhile */
      }
    }
  } catch {
    return NaN;
  }
  return total;
}

export function readStats(): WorkerStats {
  const ru = process.resourceUsage();
  const mem = process.memoryUsage();
  return {
    type: 'stats',
    cpuUserUs: ru.userCPUTime,
    cpuSystemUs: ru.systemCPUTime,
    rssBytes: mem.rss,
    maxRssBytes: ru.maxRSS * 1024,
    heapUsedBytes: mem.heapUsed,
  };
}
