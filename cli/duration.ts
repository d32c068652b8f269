// Human durations for operator flags: "90s", "10m", "1h30m", "2d", "500ms". Milliseconds out.
const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number {
  const trimmed = text.trim();
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;
  let total = 0;
  let index = 0;
  let parts = 0;
  while (index < trimmed.length) {
    part.lastIndex = index;
    const match = part.exec(trimmed);
    if (!match) break;
    total += Number(match[1]) * UNITS[match[2]!]!;
    index = part.lastIndex;
    parts++;
  }
  if (parts === 0 || index !== trimmed.length) {
    throw new RangeError(`not a duration: ${JSON.stringify(text)} (use e.g. 90s, 10m, 1h30m, 2d)`);
  }
  if (!Number.isFinite(total) || total <= 0)
    throw new RangeError(`duration must be more than zero, got ${JSON.stringify(text)}`);
  return Math.round(total);
}

export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
}
