// The flags every command takes (-o, the connection, the deprecated --json/--jsonl) and how the
// CLI writes machine output: -o json is one document (indented), -o jsonl one JSON value per line,
// both with snake_case keys; with either, stdout carries only JSON and progress goes to stderr.
import { UsageError } from './cli-args';
import type { FlagSpec } from './cli-args';
import { terminalSafeJson } from './terminal-text';

export const OUTPUT_FORMATS = ['text', 'json', 'jsonl'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export const GLOBAL_FLAGS = {
  output: {
    kind: 'string',
    short: 'o',
    value: 'FORMAT',
    help: 'text (default), json (one document) or jsonl (one JSON value per line); snake_case keys',
  },
  address: {
    kind: 'string',
    value: 'HOST:PORT',
    help: 'Temporal frontend (TEMPORAL_ADDRESS, the profile, localhost:7233)',
  },
  namespace: { kind: 'string', value: 'NAME', help: 'Temporal namespace (TEMPORAL_NAMESPACE, the profile, default)' },
  profile: { kind: 'string', value: 'NAME', help: 'temporal.toml profile (TEMPORAL_PROFILE, default)' },
  json: { kind: 'boolean', help: 'deprecated: -o json' },
  jsonl: { kind: 'boolean', help: 'deprecated: -o jsonl' },
} as const satisfies Record<string, FlagSpec>;

/** Flags that take a value, by every spelling: main() skips them to find the command's name. */
export const GLOBAL_VALUE_FLAGS: ReadonlySet<string> = new Set(
  Object.entries(GLOBAL_FLAGS)
    .filter(([, f]) => f.kind === 'string')
    .flatMap(([name, f]) => ['--' + name, ...('short' in f ? ['-' + f.short] : [])]),
);

export interface GlobalFlagValues {
  output?: string;
  json?: boolean;
  jsonl?: boolean;
}

/** The output format, from -o or a deprecated flag (which earns one line on stderr). */
export function outputFormatOf(flags: GlobalFlagValues, warn: (line: string) => void): OutputFormat {
  const deprecated = flags.json ? 'json' : flags.jsonl ? 'jsonl' : undefined;
  if (flags.json && flags.jsonl) throw new UsageError('give --json or --jsonl, not both (better: -o json|jsonl)');
  if (deprecated !== undefined) {
    if (flags.output !== undefined) throw new UsageError(`give -o ${flags.output} or --${deprecated}, not both`);
    warn(`agent: --${deprecated} is deprecated; use -o ${deprecated}`);
    return deprecated;
  }
  const format = flags.output ?? 'text';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(format))
    throw new UsageError(`-o must be text, json or jsonl, got ${JSON.stringify(format)}`);
  return format as OutputFormat;
}

/** camelCase keys to snake_case, deeply (for values whose types use camelCase, e.g. trace events). */
export function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseKeys);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snakeCaseKeys(v)]),
  );
}

/** One JSON value as the format wants it: indented for json, one line for jsonl. */
export function jsonText(value: unknown, format: OutputFormat): string {
  return terminalSafeJson(value, format === 'json' ? 2 : undefined);
}
