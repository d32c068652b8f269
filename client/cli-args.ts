// A small, strict argument parser for the agent CLI and the demo. Each command declares its
// positionals and flags; anything else is a usage error (exit 2) with a one-line message.
// Accepts `--flag value`, `--flag=value`, boolean `--flag`, `-h`/`--help`, and `--` to end flags.

export type FlagKind = 'boolean' | 'string' | 'int' | 'list';

export interface FlagSpec {
  kind: FlagKind;
  /** One line for the usage text. */
  help: string;
  /** Placeholder in the usage text (default N for int, TEXT for string, A,B for list). */
  value?: string;
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
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'UsageError';
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

export function parseArgs<S extends ArgsSpec>(argv: readonly string[], spec: S, hint?: string): ParsedArgs<S> {
  const positionals: string[] = [];
  const flags: Record<string, unknown> = {};
  let help = false;
  let flagsEnded = false;

  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (flagsEnded || token === '-' || !token.startsWith('-')) {
      positionals.push(token);
      continue;
    }
    if (token === '--') {
      flagsEnded = true;
      continue;
    }
    if (token === '-h' || token === '--help') {
      help = true;
      continue;
    }
    if (!token.startsWith('--')) {
      throw new UsageError(`unknown flag ${token}`, hint);
    }
    const eq = token.indexOf('=');
    const name = eq === -1 ? token.slice(2) : token.slice(2, eq);
    const inline = eq === -1 ? undefined : token.slice(eq + 1);
    const flag = Object.prototype.hasOwnProperty.call(spec.flags, name) ? spec.flags[name] : undefined;
    if (!flag) throw new UsageError(`unknown flag --${name}`, hint);
    if (Object.prototype.hasOwnProperty.call(flags, name)) throw new UsageError(`--${name} given more than once`, hint);

    if (flag.kind === 'boolean') {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`, hint);
      flags[name] = true;
      continue;
    }
    let raw: string | undefined = inline;
    if (raw === undefined) {
      const next = argv[i + 1];
      // A following flag is not a value; "-3" is (and is then rejected as a number).
      if (next === undefined || next.startsWith('--')) throw new UsageError(`--${name} needs a value`, hint);
      raw = next;
      i++;
    }
    flags[name] = convert(name, flag, raw, hint);
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

function convert(name: string, flag: FlagSpec, raw: string, hint: string | undefined): unknown {
  switch (flag.kind) {
    case 'int':
      try {
        return parsePositiveInt(raw, `--${name}`);
      } catch (err) {
        throw new UsageError((err as Error).message, hint);
      }
    case 'list': {
      const items = raw.split(',').map((s) => s.trim());
      if (items.some((s) => s === ''))
        throw new UsageError(
          `--${name} needs a comma-separated list without empty items, got ${JSON.stringify(raw)}`,
          hint,
        );
      return items;
    }
    case 'string':
      if (raw.trim() === '') throw new UsageError(`--${name} needs a non-empty value`, hint);
      return raw;
    case 'boolean':
      return true;
  }
}

/** The usage text of a command: synopsis line, then one line per positional and flag. */
export function usageText(synopsis: string, spec: ArgsSpec): string {
  const rows: Array<[string, string]> = [];
  for (const p of spec.positionals) rows.push([p.name, p.help]);
  for (const [name, flag] of Object.entries(spec.flags)) {
    const value =
      flag.kind === 'boolean'
        ? ''
        : ` ${flag.value ?? (flag.kind === 'int' ? 'N' : flag.kind === 'list' ? 'A,B' : 'TEXT')}`;
    rows.push([`--${name}${value}`, flag.help]);
  }
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return [synopsis, ...rows.map(([left, right]) => `    ${left.padEnd(width)}  ${right}`)].join('\n');
}
