// json.dumps(value, sort_keys=...) byte for byte as Python writes it with its defaults: separators ", " and
// ": ", ensure_ascii (every character outside ' '..'~' as \uXXXX, lowercase hex, astral characters as
// surrogate pairs), floats as repr(), NaN/Infinity spelled as Python does, keys sorted by code point.
import { floatRepr } from './float';
import { PythonInt } from './int';

export type PyJson = null | boolean | number | bigint | string | PythonInt | PyJson[] | { [key: string]: PyJson };

const ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

const PLAIN = /^[ !#-[\]-~]*$/; // printable ASCII without '"' and '\'

/** A JSON string literal as Python's json.dumps writes it (ensure_ascii=True). */
export function pyJsonString(s: string): string {
  if (PLAIN.test(s)) return `"${s}"`;
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const code = s.charCodeAt(i);
    const escape = ESCAPES[ch];
    if (escape !== undefined) out += escape;
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Python's ordering of str: by code point (JavaScript's < compares UTF-16 code units). */
export function comparePyStr(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (a code point above U+FFFF) sorts after every BMP code unit up to U+FFFF.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

function pyFloatJson(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return floatRepr(x);
}

function write(value: PyJson, sortKeys: boolean, out: string[]): void {
  if (value === null) out.push('null');
  else if (value === true) out.push('true');
  else if (value === false) out.push('false');
  else if (typeof value === 'number') out.push(pyFloatJson(value));
  else if (typeof value === 'bigint') out.push(value.toString());
  else if (typeof value === 'string') out.push(pyJsonString(value));
  else if (value instanceof PythonInt) out.push(String(value.value));
  else if (Array.isArray(value)) {
    out.push('[');
    value.forEach((item, i) => {
      if (i > 0) out.push(', ');
      write(item, sortKeys, out);
    });
    out.push(']');
  } else {
    const keys = Object.keys(value);
    if (sortKeys) keys.sort(comparePyStr);
    out.push('{');
    keys.forEach((key, i) => {
      const item = value[key];
      if (item === undefined) throw new TypeError(`pyJsonDumps: undefined at key ${key}`);
      if (i > 0) out.push(', ');
      out.push(pyJsonString(key), ': ');
      write(item, sortKeys, out);
    });
    out.push('}');
  }
}

/**
 * json.dumps(value, sort_keys=sortKeys) with Python's defaults. A JavaScript number is a Python float (the
 * retail data model has float fields only); a Python int is a bigint or a PythonInt.
 */
export function pyJsonDumps(value: PyJson, options: { sortKeys?: boolean } = {}): string {
  const out: string[] = [];
  write(value, options.sortKeys ?? false, out);
  return out.join('');
}
