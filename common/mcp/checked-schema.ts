// Which recorded JSON Schemas the workflow can enforce in full: deny by default. zod's
// fromJSONSchema reads more keywords than it checks (it ignores `dependencies`, a `required` naming
// an undeclared property, an unknown `format`; it drops a limit with no `type` beside it), so a
// schema is enforced only when every keyword in it, at any depth, is one of the list below, used
// where zod checks it. Anything else makes the tool unavailable to the run, with the reason in its
// discovery record. Pure: the workflow and the listing activity call it.
import { z } from 'zod';

/**
 * Words that constrain nothing. A `default` is left to the server: the gateway fills none in (zod
 * would, unchecked against the schema's own limits), so an omitted property stays omitted.
 */
const ANNOTATIONS = ['title', 'description', '$comment', 'examples', 'default', 'deprecated'];
/** The keywords each type's values are checked against, and nowhere else. */
const BY_TYPE: Record<string, readonly string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  object: ['properties', 'required', 'additionalProperties'],
  array: ['items', 'minItems', 'maxItems'],
  boolean: [],
  null: [],
};
/** The formats zod checks (any other it would ignore). */
const FORMATS = ['date-time', 'date', 'time', 'duration', 'email', 'uri', 'uuid', 'ipv4', 'ipv6', 'hostname'];

/** Every keyword the gateway enforces (docs/mcp.md lists them). */
export const ENFORCED_KEYWORDS: readonly string[] = [
  ...new Set(['type', 'enum', 'const', 'anyOf', ...Object.values(BY_TYPE).flat(), ...ANNOTATIONS, '$schema']),
];

/**
 * Property names an object parse confuses with the prototype's: `prototype`, and every name an
 * object inherits (`__proto__`, `constructor`, `toString`, `valueOf`, `hasOwnProperty`...), which
 * zod finds on `{}` so a `required` naming one would pass with the key absent.
 */
export const isHostileName = (name: string): boolean => name === 'prototype' || name in Object.prototype;

type Node = Record<string, unknown>;
const isPrimitive = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
const typeOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;
const matchesType = (value: unknown, type: string) =>
  typeOf(value) === type || (type === 'number' && typeOf(value) === 'integer');

/** Why the schema cannot be enforced in full, or undefined when it can (the root must be an object's). */
export function uncheckedSchemaPart(schema: unknown): string | undefined {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return '#: not a schema';
  if ((schema as Node).type !== 'object') return '#: not type object';
  return nodeProblem(schema, '#', true);
}

/** Why the tool's schema cannot be enforced (this list, then zod itself), or undefined. */
export function schemaRefusal(schema: unknown): string | undefined {
  const why = uncheckedSchemaPart(schema);
  if (why) return why;
  try {
    z.fromJSONSchema(schema as never);
    return undefined;
  } catch (err) {
    return `#: zod cannot read it (${(err instanceof Error ? err.message : String(err)).slice(0, 100)})`;
  }
}

function nodeProblem(schema: unknown, at: string, root = false): string | undefined {
  if (typeof schema === 'boolean') return undefined;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return `${at}: not a schema`;
  const node = schema as Node;
  const types = node.type === undefined ? [] : Array.isArray(node.type) ? node.type : [node.type];
  if (!types.every((t) => typeof t === 'string' && Object.hasOwn(BY_TYPE, t)) || new Set(types).size < types.length)
    return `${at}: type ${JSON.stringify(node.type)}`;
  const single = types.length === 1 && !Array.isArray(node.type) ? (types[0] as string) : undefined;
  const typed = single ? BY_TYPE[single]! : [];
  for (const keyword of Object.keys(node)) {
    if (keyword === 'type' || ANNOTATIONS.includes(keyword)) continue;
    if (keyword === '$schema' && root && typeof node.$schema === 'string') continue;
    if (['enum', 'const', 'anyOf'].includes(keyword) || typed.includes(keyword)) continue;
    const typeSpecific = Object.values(BY_TYPE).some((list) => list.includes(keyword));
    if (typeSpecific) return `${at}: ${keyword} ${single ? `on type ${single}` : 'without one type beside it'}`;
    return `${at}: ${keyword} is not a keyword the gateway enforces`;
  }
  // enum, const and anyOf stand alone (zod reads nothing beside them but the type of enum and const).
  for (const keyword of ['enum', 'const', 'anyOf'] as const) {
    if (!(keyword in node)) continue;
    const beside = Object.keys(node).filter((k) => k !== keyword && !ANNOTATIONS.includes(k) && k !== '$schema');
    const allowed = keyword === 'anyOf' ? [] : ['type'];
    const extra = beside.find((k) => !allowed.includes(k));
    if (extra) return `${at}: ${extra} beside ${keyword}`;
  }
  if ('enum' in node) {
    const values = node.enum;
    if (!Array.isArray(values) || values.length === 0 || !values.every(isPrimitive))
      return `${at}/enum: not a list of plain values`;
    if (types.length > 0 && !values.every((v) => types.some((t) => matchesType(v, t as string))))
      return `${at}/enum: a value not of its type`;
  }
  if ('const' in node) {
    if (!isPrimitive(node.const)) return `${at}/const: not a plain value`;
    if (types.length > 0 && !types.some((t) => matchesType(node.const, t as string)))
      return `${at}/const: not of its type`;
  }
  if ('anyOf' in node) {
    if (!Array.isArray(node.anyOf) || node.anyOf.length === 0) return `${at}/anyOf: not a list of schemas`;
    for (const [i, sub] of node.anyOf.entries()) {
      const why = nodeProblem(sub, `${at}/anyOf/${i}`);
      if (why) return why;
    }
  }
  return single ? typedProblem(node, single, at) : undefined;
}

/** The values of a typed node's keywords: the forms zod checks. */
function typedProblem(node: Node, type: string, at: string): string | undefined {
  for (const k of ['minLength', 'maxLength', 'minItems', 'maxItems'])
    if (k in node && !isCount(node[k])) return `${at}/${k}: not a count`;
  for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'])
    if (k in node && !Number.isFinite(node[k])) return `${at}/${k}: not a number`;
  if ('pattern' in node) {
    if (typeof node.pattern !== 'string') return `${at}/pattern: not a string`;
    try {
      // JSON Schema patterns are ECMA-262 with unicode: `\p{Nd}` is a class, not the letters p{Nd}.
      new RegExp(node.pattern, 'u');
    } catch {
      return `${at}/pattern: not a unicode regular expression`;
    }
  }
  if ('format' in node && !FORMATS.includes(node.format as string))
    return `${at}/format: ${JSON.stringify(node.format).slice(0, 40)} is not a format the gateway checks`;
  if (type === 'array') {
    // zod applies an array's limits only beside its items (found by test/mcp/mcp-checked-schema.test.ts).
    const limit = ['minItems', 'maxItems'].find((k) => k in node);
    if (!('items' in node)) return limit ? `${at}: ${limit} without items beside it` : undefined;
    return nodeProblem(node.items, `${at}/items`);
  }
  if (type !== 'object') return undefined;
  const properties = node.properties ?? {};
  if (properties === null || typeof properties !== 'object' || Array.isArray(properties))
    return `${at}/properties: not a map of schemas`;
  for (const [name, sub] of Object.entries(properties)) {
    // An object parse treats these names as the prototype's, so nothing about them would be checked.
    if (isHostileName(name)) return `${at}/properties: ${name} is not a property name the gateway checks`;
    const why = nodeProblem(sub, `${at}/properties/${name}`);
    if (why) return why;
  }
  if ('required' in node) {
    const required = node.required;
    if (!Array.isArray(required) || !required.every((r) => typeof r === 'string'))
      return `${at}/required: not a list of names`;
    // zod makes only declared properties required: one it does not know of would not be.
    const hostile = (required as string[]).find(isHostileName);
    if (hostile !== undefined) return `${at}/required: ${hostile} is not a property name the gateway checks`;
    const undeclared = required.find((r) => !Object.hasOwn(properties, r as string));
    if (undeclared !== undefined)
      return `${at}/required: ${JSON.stringify(undeclared).slice(0, 40)} is not a declared property`;
  }
  if ('additionalProperties' in node) return nodeProblem(node.additionalProperties, `${at}/additionalProperties`);
  return undefined;
}

/**
 * The checker of a tool's arguments, for a schema schemaRefusal accepted: zod's reading of it
 * without its defaults (the gateway fills none) and without its patterns, which zod would compile
 * without the unicode flag; each pattern is checked here with it, in the branch of an anyOf that holds.
 */
export function checkedArgs(schema: unknown): z.ZodType<Record<string, unknown>> {
  // zod neither checks nor keeps a `__proto__` key, and finds inherited names on any object:
  // arguments naming one are refused before it reads them.
  return z
    .unknown()
    .refine((value) => !hostileKey(value), 'a key named prototype or after a member every object inherits')
    .pipe(holds(schema))
    .refine((value) => patternsHold(schema, value), 'a string does not match its pattern') as z.ZodType<
    Record<string, unknown>
  >;
}

function hostileKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hostileKey);
  return Object.keys(value).some(isHostileName) || Object.values(value).some(hostileKey);
}

const zodCache = new WeakMap<object, z.ZodType>();
/** zod's schema for a node, defaults and patterns left out (cached per node: anyOf asks again). */
function holds(schema: unknown): z.ZodType {
  if (typeof schema !== 'object' || schema === null) return z.fromJSONSchema(schema as never);
  let zod = zodCache.get(schema);
  if (!zod) zodCache.set(schema, (zod = z.fromJSONSchema(forZod(schema) as never)));
  return zod;
}

/** A copy of the schema without `default` and `pattern` where they are keywords (not property names). */
function forZod(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const copy: Node = {};
  for (const [k, v] of Object.entries(schema as Node)) {
    if (k === 'default' || k === 'pattern') continue;
    if (k === 'properties' && v !== null && typeof v === 'object')
      copy[k] = Object.fromEntries(Object.entries(v as Node).map(([name, sub]) => [name, forZod(sub)]));
    else if (k === 'anyOf' && Array.isArray(v)) copy[k] = v.map(forZod);
    else if (k === 'items' || k === 'additionalProperties') copy[k] = forZod(v);
    else copy[k] = v;
  }
  return copy;
}

/** Whether the patterns of a schema hold on a value zod (without them) accepted. */
function patternsHold(schema: unknown, value: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return true;
  const node = schema as Node;
  if (Array.isArray(node.anyOf))
    return node.anyOf.some((branch) => holds(branch).safeParse(value).success && patternsHold(branch, value));
  if (typeof node.pattern === 'string' && typeof value === 'string' && !new RegExp(node.pattern, 'u').test(value))
    return false;
  if (Array.isArray(value)) return value.every((item) => patternsHold(node.items, item));
  if (value === null || typeof value !== 'object') return true;
  const properties = (node.properties ?? {}) as Node;
  return Object.entries(value).every(([k, v]) =>
    patternsHold(Object.hasOwn(properties, k) ? properties[k] : node.additionalProperties, v),
  );
}
