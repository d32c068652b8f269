// The worker's event log: the SDK's Runtime logger (its own events, the activities' `log`, the
// forwarded native core logs) written to stdout one line per event, as text (`time LEVEL message
// key=value ...`) or JSON (LOG_FORMAT), from LOG_LEVEL up. The activity task token the SDK puts in
// some events' attributes is dropped: it is a credential for completing that activity.
import { DefaultLogger } from '@temporalio/worker';
import type { LogEntry } from '@temporalio/worker';
import { readEnv } from '../runtime/env-vars';
import type { LogLevelName } from '../runtime/env-vars';

export type LogFormat = 'text' | 'json';

export interface LogSettings {
  format: LogFormat;
  level: LogLevelName;
}

export function logSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): LogSettings {
  return { format: readEnv('LOG_FORMAT', env), level: readEnv('LOG_LEVEL', env) };
}

/** Attributes never written: credentials the SDK includes in some events. */
const DROPPED = new Set(['taskToken', 'base64TaskToken']);

/** An attribute's value as JSON can carry it: errors by name and message (never a stack: one line). */
function plain(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** JSON of a value that may not be JSON (a cycle, a bigint inside): its String() then. */
function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return JSON.stringify(String(value));
  }
}

/** A text value: bare when it is a simple word, else JSON-quoted (control characters escaped). */
function textValue(value: unknown): string {
  if (value instanceof Error) return json(`${value.name}: ${value.message}`);
  if (typeof value === 'string') return /^[\w.:/@+-]+$/.test(value) ? value : json(value);
  return json(plain(value));
}

/** One line for one event. */
export function formatLogEntry(entry: LogEntry, format: LogFormat): string {
  const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const attrs = Object.entries(entry.meta ?? {}).filter(([key, value]) => !DROPPED.has(key) && value !== undefined);
  if (format === 'json') {
    const record: Record<string, unknown> = { time, level: entry.level, message: entry.message };
    for (const [key, value] of attrs) if (!(key in record)) record[key] = plain(value);
    try {
      return JSON.stringify(record);
    } catch {
      return JSON.stringify(Object.fromEntries(Object.entries(record).map(([k, v]) => [k, json(v)])));
    }
  }
  // The message's control characters (a newline in an error) escaped, so one event stays one line.
  // eslint-disable-next-line no-control-regex
  const message = entry.message.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
  return [time, entry.level, message, ...attrs.map(([key, value]) => `${key}=${textValue(value)}`)].join(' ');
}

/** The Runtime's logger: `write` receives one line per event (default: stdout). */
export function createAgentLogger(
  settings: LogSettings,
  write: (line: string) => void = (line) => void process.stdout.write(`${line}\n`),
): DefaultLogger {
  return new DefaultLogger(settings.level, (entry) => write(formatLogEntry(entry, settings.format)));
}

/** Native core logs: warnings and errors, or everything from the level asked when it is more verbose. */
export function coreLogLevel(level: LogLevelName): LogLevelName {
  return level === 'TRACE' || level === 'DEBUG' ? level : level === 'ERROR' ? 'ERROR' : 'WARN';
}
