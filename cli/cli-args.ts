// Argument parsing for the agent CLI and the demo: Node's own `util.parseArgs` splits the words
// (`--flag value`, `--flag=value`, `-o json`, `-ojson`, `--` to end flags); each command declares
// its positionals and flags in a table, and anything else is a usage error (exit 2) in one line.
import { parseArgs as tokenize } from 'node:util';
import { AgentError, EXIT } from '../client/agent-error';

/** `optional`: a string that may be left out (`--waiting` alone is ''); the command checks it. */
export type FlagKind = 'boolean' | 'string' | 'int' | 'list' | 'optional';

export interface FlagSpec {
  kind: FlagKind;
  /** One line for the usage text. */
  help: string;
  /** Placeholder in the usage text (default N for int, TEXT for string, A,B for list). */
  value?: string;
  /** A one-letter alias (-o). */
  short?: string;
}

export interface PositionalSpec {
  name: string;
  required: boolean;
  help: string;
}

export interface ArgsSpec {
  positionals: readonly PositionalSpec[];
  flags: Readonly<Record<string, FlagSpec>>;
}

type FlagValue<K extends FlagKind> = K extends 'boolean'
  ? boolean
  : K extends 'int'
    ? number
    : K extends 'list'
      ? string[]
      : string;

export type ParsedFlags<F extends Readonly<Record<string, FlagSpec>>> = {
  -readonly [N in keyof F]?: FlagValue<F[N]['kind']>;
};

export interface ParsedArgs<S extends ArgsSpec> {
  positionals: string[];
  flags: ParsedFlags<S['flags']>;
  /** -h or --help was given: the caller prints the usage instead of running. */
  help: boolean;
}

/** Bad input from the user: one line on stderr, exit 2. `hint` names the help to read. */
export class UsageError extends AgentError {
  constructor(message: string, hint?: string) {
    super(message, EXIT.USAGE, hint);
  }
}

/** Parses a strictly positive integer: digits only, no sign, no fraction, no exponent, no blanks. */
export function parsePositiveInt(raw: string, what: string): number {
  if (!/^[0-9]+$/.test(raw) || /^0+$/.test(raw)) {
    throw new UsageError(`${what} must be a positive integer, got ${JSON.stringify(raw)}`);
  }
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${what} is too large: ${raw}`);
  return n;
}

const HELP_FLAG = { help: { type: 'boolean', short: 'h' } } as const;

export function parseArgs<S extends ArgsSpec>(argv: readonly string[], spec: S, hint?: string): ParsedArgs<S> {
  const options: Record<string, { type: 'boolean' | 'string'; short?: string }> = { ...HELP_FLAG };
  for (const [name, flag] of Object.entries(spec.flags)) {
    options[name] = {
      type: flag.kind === 'boolean' ? 'boolean' : 'string',
      ...(flag.short ? { short: flag.short } : {}),
    };
  }
  // Not strict: parseArgs only splits the words; the checks below say what is wrong in our words.
  const args = withOptionalValues(argv, spec);
  const { tokens } = tokenize({ args, options, strict: false, allowPositionals: true, tokens: true });

  const positionals: string[] = [];
  const flags: Record<string, unknown> = {};
  let help = false;
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    if (token.name === 'help') {
      help = true;
      continue;
    }
    const flag = Object.prototype.hasOwnProperty.call(spec.flags, token.name) ? spec.flags[token.name] : undefined;
    // An unknown short flag keeps its dash (-x); an unknown long one its two (--x).
    if (!flag) throw new UsageError(`unknown flag ${token.rawName}`, hint);
    const name = `--${token.name}`;
    if (Object.prototype.hasOwnProperty.call(flags, token.name))
      throw new UsageError(`${name} given more than once`, hint);
    if (flag.kind === 'boolean') {
      if (token.value !== undefined) throw new UsageError(`${name} takes no value`, hint);
      flags[token.name] = true;
      continue;
    }
    // A following long flag is not a value ("--wait --json"); "-3" is (and is then refused as a number).
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--')))
      throw new UsageError(`${name} needs a value`, hint);
    flags[token.name] = convert(name, flag, token.value, hint);
  }

  if (!help) {
    const required = spec.positionals.filter((p) => p.required).length;
    if (positionals.length < required) {
      throw new UsageError(`missing ${spec.positionals[positionals.length]!.name}`, hint);
    }
    if (positionals.length > spec.positionals.length) {
      throw new UsageError(`unexpected argument ${JSON.stringify(positionals[spec.positionals.length])}`, hint);
    }
  }
  return { positionals, flags: flags as ParsedFlags<S['flags']>, help };
}

/**
 * A flag whose value may be left out, given bare (last, or before another flag), becomes
 * `--flag=` so that the word after it is not taken for its value.
 */
function withOptionalValues(argv: readonly string[], spec: ArgsSpec): string[] {
  const args = [...argv];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') break;
    const name = args[i]!.startsWith('--') ? args[i]!.slice(2) : undefined;
    if (name === undefined || !Object.prototype.hasOwnProperty.call(spec.flags, name)) continue;
    if (spec.flags[name]!.kind !== 'optional') continue;
    const next = args[i + 1];
    if (next === undefined || next.startsWith('-')) args[i] = `--${name}=`;
  }
  return args;
}

function convert(name: string, flag: FlagSpec, raw: string, hint: string | undefined): unknown {
  switch (flag.kind) {
    case 'optional':
      return raw;
    case 'int':
      try {
        return parsePositiveInt(raw, name);
      } catch (err) {
        throw new UsageError((err as Error).message, hint);
      }
    case 'list': {
      const items = raw.split(',').map((s) => s.trim());
      if (items.some((s) => s === ''))
        throw new UsageError(
          `${name} needs a comma-separated list without empty items, got ${JSON.stringify(raw)}`,
          hint,
        );
      return items;
    }
    default:
      if (raw.trim() === '') throw new UsageError(`${name} needs a non-empty value`, hint);
      return raw;
  }
}

/** The rows of a usage text: one per positional and flag, aligned. */
export function usageRows(spec: ArgsSpec): string[] {
  const rows: Array<[string, string]> = [];
  for (const p of spec.positionals) rows.push([p.name, p.help]);
  for (const [name, flag] of Object.entries(spec.flags)) {
    const value =
      flag.kind === 'boolean'
        ? ''
        : ` ${flag.value ?? (flag.kind === 'int' ? 'N' : flag.kind === 'list' ? 'A,B' : 'TEXT')}`;
    rows.push([`${flag.short ? `-${flag.short}, ` : ''}--${name}${value}`, flag.help]);
  }
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `    ${left.padEnd(width)}  ${right}`);
}

/** The usage text of a command: synopsis line, then one line per positional and flag. */
export function usageText(synopsis: string, spec: ArgsSpec): string {
  return [synopsis, ...usageRows(spec)].join('\n');
}
