// A strict parser for the small subset of YAML our deployment files use (the project has no YAML
// dependency): block mappings and sequences by indentation, plain / single- / double-quoted
// scalars, one-line flow sequences, comments. Anything else (anchors, aliases, tags, block
// scalars, flow mappings, several documents, tabs, duplicate keys) is an error, never a guess,
// so a file this accepts means what it says to any YAML parser.
// Plain scalars follow YAML 1.2's core schema (what compose-go's YAML library uses): null, ~,
// true, false, integers and decimals are typed; everything else is a string.

interface Line {
  no: number;
  indent: number;
  text: string;
}

export class YamlSubsetError extends Error {}

export function parseYamlSubset(source: string): unknown {
  const lines: Line[] = [];
  source.split('\n').forEach((raw, i) => {
    if (raw.slice(0, raw.length - raw.trimStart().length).includes('\t'))
      throw new YamlSubsetError(`line ${i + 1}: tab in indentation`);
    const text = stripComment(raw, i + 1).trimEnd();
    if (text.trim() === '') return;
    if (text.trim() === '---' || text.trim() === '...')
      throw new YamlSubsetError(`line ${i + 1}: document markers are not supported`);
    lines.push({ no: i + 1, indent: text.length - text.trimStart().length, text: text.trimStart() });
  });
  if (lines.length === 0) return null;
  const state = { i: 0 };
  const value = parseBlock(lines, state, lines[0]!.indent);
  if (state.i < lines.length) throw new YamlSubsetError(`line ${lines[state.i]!.no}: unexpected indentation`);
  return value;
}

function parseBlock(lines: Line[], state: { i: number }, indent: number): unknown {
  const first = lines[state.i]!;
  if (first.indent !== indent) throw new YamlSubsetError(`line ${first.no}: bad indentation`);
  return isSequenceItem(first.text) ? parseSequence(lines, state, indent) : parseMapping(lines, state, indent);
}

function isSequenceItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

function parseSequence(lines: Line[], state: { i: number }, indent: number): unknown[] {
  const items: unknown[] = [];
  while (state.i < lines.length && lines[state.i]!.indent === indent && isSequenceItem(lines[state.i]!.text)) {
    const line = lines[state.i]!;
    const rest = line.text === '-' ? '' : line.text.slice(2);
    const restIndent = indent + 2 + (rest.length - rest.trimStart().length);
    if (rest.trim() === '') {
      state.i++;
      items.push(childBlock(lines, state, indent));
    } else if (splitKey(rest.trim(), line.no)) {
      // "- key: value" starts a mapping whose keys sit at the column of `key`.
      lines[state.i] = { no: line.no, indent: restIndent, text: rest.trim() };
      items.push(parseMapping(lines, state, restIndent));
    } else {
      state.i++;
      items.push(scalarOrFlow(rest.trim(), line.no));
    }
  }
  return items;
}

function parseMapping(lines: Line[], state: { i: number }, indent: number): Record<string, unknown> {
  const map: Record<string, unknown> = {};
  while (state.i < lines.length && lines[state.i]!.indent === indent) {
    const line = lines[state.i]!;
    if (isSequenceItem(line.text))
      throw new YamlSubsetError(`line ${line.no}: a sequence item where a key was expected`);
    const kv = splitKey(line.text, line.no);
    if (!kv) throw new YamlSubsetError(`line ${line.no}: expected "key: value"`);
    if (Object.prototype.hasOwnProperty.call(map, kv.key))
      throw new YamlSubsetError(`line ${line.no}: duplicate key ${JSON.stringify(kv.key)}`);
    state.i++;
    if (kv.value === '') {
      const next = lines[state.i];
      // A sequence may sit at the same indentation as its key ("key:\n- a").
      if (next && next.indent === indent && isSequenceItem(next.text))
        map[kv.key] = parseSequence(lines, state, indent);
      else map[kv.key] = childBlock(lines, state, indent);
    } else {
      map[kv.key] = scalarOrFlow(kv.value, line.no);
    }
  }
  if (state.i < lines.length && lines[state.i]!.indent > indent) {
    throw new YamlSubsetError(`line ${lines[state.i]!.no}: unexpected indentation`);
  }
  return map;
}

function childBlock(lines: Line[], state: { i: number }, parentIndent: number): unknown {
  const next = lines[state.i];
  if (!next || next.indent <= parentIndent) return null; // "key:" with nothing under it
  return parseBlock(lines, state, next.indent);
}

/** `key: value` (value may be empty). Keys are plain or quoted; null when the text is not a pair. */
function splitKey(text: string, no: number): { key: string; value: string } | null {
  let key: string;
  let rest: string;
  if (text.startsWith('"') || text.startsWith("'")) {
    const end = closingQuote(text, 0, no);
    if (text[end + 1] !== ':') return null;
    key = String(quoted(text.slice(0, end + 1), no));
    rest = text.slice(end + 2);
  } else {
    const match = /^([^\s:[\]{},#&*!|>'"%@`][^:]*?):(?:\s|$)/.exec(text);
    if (!match) return null;
    key = match[1]!;
    rest = text.slice(match[1]!.length + 1);
  }
  if (rest !== '' && !rest.startsWith(' ')) return null;
  return { key, value: rest.trim() };
}

function scalarOrFlow(text: string, no: number): unknown {
  if (text.startsWith('[')) return flowSequence(text, no);
  if (text === '{}') return {};
  return scalar(text, no);
}

function flowSequence(text: string, no: number): unknown[] {
  if (!text.endsWith(']')) throw new YamlSubsetError(`line ${no}: a flow sequence must end on its line`);
  const inner = text.slice(1, -1).trim();
  if (inner === '') return [];
  const items: string[] = [];
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c === '"' || c === "'") i = closingQuote(inner, i, no);
    else if (c === '[' || c === '{') throw new YamlSubsetError(`line ${no}: nested flow collections are not supported`);
    else if (c === ',') {
      items.push(inner.slice(start, i).trim());
      start = i + 1;
    }
  }
  items.push(inner.slice(start).trim());
  if (items.some((item) => item === '')) throw new YamlSubsetError(`line ${no}: empty item in a flow sequence`);
  return items.map((item) => scalar(item, no));
}

function scalar(text: string, no: number): unknown {
  if (text.startsWith('"') || text.startsWith("'")) {
    const end = closingQuote(text, 0, no);
    if (end !== text.length - 1) throw new YamlSubsetError(`line ${no}: text after a quoted scalar`);
    return quoted(text, no);
  }
  if (/^[&*!|>{%@`]/.test(text))
    throw new YamlSubsetError(`line ${no}: unsupported YAML syntax ${JSON.stringify(text.slice(0, 20))}`);
  if (/:\s/.test(text) || text.endsWith(':'))
    throw new YamlSubsetError(`line ${no}: a plain scalar may not contain ": "`);
  if (text === 'null' || text === '~' || text === 'Null' || text === 'NULL') return null;
  if (text === 'true' || text === 'True' || text === 'TRUE') return true;
  if (text === 'false' || text === 'False' || text === 'FALSE') return false;
  if (/^[-+]?[0-9]+$/.test(text)) return Number(text);
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(text)) return Number(text);
  return text;
}

function quoted(text: string, no: number): string {
  if (text.startsWith("'")) return text.slice(1, -1).replace(/''/g, "'");
  try {
    return JSON.parse(text) as string;
  } catch {
    throw new YamlSubsetError(`line ${no}: unsupported escape in ${text}`);
  }
}

function closingQuote(text: string, start: number, no: number): number {
  const q = text[start]!;
  for (let i = start + 1; i < text.length; i++) {
    if (q === '"' && text[i] === '\\') {
      i++;
      continue;
    }
    if (text[i] === q) {
      if (q === "'" && text[i + 1] === "'") {
        i++;
        continue;
      }
      return i;
    }
  }
  throw new YamlSubsetError(`line ${no}: unterminated quoted scalar`);
}

/** Removes a comment: `#` at the start or after a blank, outside quotes. */
function stripComment(raw: string, no: number): string {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if ((c === '"' || c === "'") && (i === 0 || /[\s[,:-]/.test(raw[i - 1]!))) {
      i = closingQuote(raw, i, no);
      continue;
    }
    if (c === '#' && (i === 0 || /\s/.test(raw[i - 1]!))) return raw.slice(0, i);
  }
  return raw;
}
