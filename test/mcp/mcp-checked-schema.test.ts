// Which recorded JSON Schemas the gateway enforces in full (common/mcp/checked-schema.ts): deny by
// default. Examples of both sides, then properties over generated schemas: a schema is offered only
// when every keyword in it is one the gateway enforces, where it enforces it; and arguments the
// gateway's zod schema accepts satisfy the schema, by a reference validator of JSON Schema's own rules.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkedArgs, schemaRefusal, uncheckedSchemaPart } from '../../common/mcp/checked-schema';

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  ...extra,
});

describe('schemas the gateway enforces in full', () => {
  const enforced: Array<[string, unknown, unknown]> = [
    ['a typed maximum', object({ amount: { type: 'number', maximum: 100 } }), { amount: 1e6 }],
    ['a nested required', object({ to: object({ iban: { type: 'string', maxLength: 34 } }) }), { to: {} }],
    [
      'items of an array',
      object({ ids: { type: 'array', items: { type: 'integer' }, maxItems: 2 } }),
      { ids: [1, 2, 3] },
    ],
    ['no extra keys', object({ a: { type: 'string' } }, { additionalProperties: false }), { a: 'x', b: 1 }],
    ['anyOf with null', object({ n: { anyOf: [{ type: 'string', maxLength: 2 }, { type: 'null' }] } }), { n: 'long' }],
    ['an enum', object({ mode: { type: 'string', enum: ['a', 'b'], description: 'how' } }), { mode: 'c' }],
    ['a known format', object({ at: { type: 'string', format: 'date-time' } }), { at: 'yesterday' }],
    [
      "zod's own JSON Schema",
      { $schema: 'https://json-schema.org/draft/2020-12/schema', ...object({ q: { type: 'string', minLength: 1 } }) },
      { q: '' },
    ],
  ];
  for (const [name, schema, bad] of enforced)
    it(`${name}: accepted, and zod refuses the bad arguments`, () => {
      assert.equal(schemaRefusal(schema), undefined);
      assert.equal(checkedArgs(schema).safeParse(bad).success, false);
    });

  // Found by the adversary: zod filled a default the schema's own maximum forbids, on an effectful call.
  it('a default is never filled in: an omitted property stays omitted', () => {
    const schema = { type: 'object', properties: { amount: { type: 'number', maximum: 100, default: 1e6 } } };
    assert.equal(schemaRefusal(schema), undefined);
    assert.deepEqual(checkedArgs(schema).parse({}), {});
    assert.equal(checkedArgs(schema).safeParse({ amount: 1e6 }).success, false);
    const nested = object({
      o: { type: 'object', properties: { n: { type: 'string', maxLength: 1, default: 'long' } } },
    });
    assert.deepEqual(checkedArgs(nested).parse({ o: {} }), { o: {} });
  });

  it('a pattern is read with the unicode flag (\\p{Nd} is a digit, not the letters p{Nd})', () => {
    const schema = object({ code: { type: 'string', pattern: '^\\p{Nd}{3}$' } });
    assert.equal(schemaRefusal(schema), undefined);
    const args = checkedArgs(schema);
    assert.equal(args.safeParse({ code: '123' }).success, true);
    assert.equal(args.safeParse({ code: '١٢٣' }).success, true);
    assert.equal(args.safeParse({ code: 'p{Nd}}}' }).success, false);
    assert.equal(args.safeParse({ code: '12' }).success, false);
    // One character outside the BMP is one `.` with the flag (two UTF-16 units without it).
    assert.equal(checkedArgs(object({ e: { type: 'string', pattern: '^.$' } })).safeParse({ e: '😀' }).success, true);
    // In an anyOf, the pattern of the branch that holds.
    const either = object({
      v: {
        anyOf: [
          { type: 'string', pattern: '^a$' },
          { type: 'string', maxLength: 0 },
        ],
      },
    });
    assert.equal(checkedArgs(either).safeParse({ v: 'a' }).success, true);
    assert.equal(checkedArgs(either).safeParse({ v: 'b' }).success, false);
  });

  it('arguments with a key named after an inherited member are refused, at any depth', () => {
    const schema = object({ a: { type: 'string' }, o: { type: 'object' } });
    for (const name of ['prototype', ...Object.getOwnPropertyNames(Object.prototype)]) {
      const top = JSON.parse(`{"a": "x", "o": {}, ${JSON.stringify(name)}: 1}`);
      const deep = JSON.parse(`{"a": "x", "o": {${JSON.stringify(name)}: 1}}`);
      assert.equal(checkedArgs(schema).safeParse(top).success, false, name);
      assert.equal(checkedArgs(schema).safeParse(deep).success, false, name);
    }
    assert.equal(checkedArgs(schema).safeParse({ a: 'x', o: { b: 1 } }).success, true);
  });

  const refused: Array<[string, unknown, RegExp]> = [
    ['a maximum with no type', object({ amount: { maximum: 100 } }), /amount: maximum without one type/],
    ['allOf', object({ amount: { allOf: [{ type: 'number' }, { maximum: 100 }] } }), /allOf/],
    ['object keywords under a type list', object({ o: { type: ['object', 'null'], required: ['x'] } }), /required/],
    ['a string limit on a number', object({ n: { type: 'number', maxLength: 3 } }), /maxLength on type number/],
    ['items without a type', object({ l: { items: { type: 'string' } } }), /items without one type/],
    ['$defs', { ...object({}), $defs: { x: { minimum: 1 } } }, /#: \$defs is not a keyword the gateway enforces/],
    // The two the issue reproduced: zod ignores both, so `{}` and `{express: "yes"}` would pass.
    [
      'a required property never declared',
      { type: 'object', required: ['confirm_code'] },
      /#\/required: "confirm_code" is not a declared property/,
    ],
    [
      'dependencies',
      { type: 'object', properties: { express: { type: 'string' } }, dependencies: { express: ['address'] } },
      /#: dependencies is not a keyword the gateway enforces/,
    ],
    ['dependentRequired', { type: 'object', dependentRequired: { a: ['b'] } }, /dependentRequired/],
    ['if/then', { type: 'object', if: { required: ['a'] }, then: { required: ['b'] } }, /#: if is not/],
    ['patternProperties', { type: 'object', patternProperties: { '^x': { type: 'string' } } }, /patternProperties/],
    ['a $ref', { type: 'object', properties: { a: { $ref: '#/$defs/a' } } }, /\$ref is not/],
    ['an unknown format', object({ a: { type: 'string', format: 'iban-ish' } }), /format: "iban-ish" is not a format/],
    ['a vendor keyword', object({ a: { type: 'string', 'x-max': 3 } }), /x-max is not/],
    ['a type beside an enum', object({ a: { enum: ['x', 1], type: 'string' } }), /enum: a value not of its type/],
    ['a limit beside an enum', object({ a: { enum: ['x'], maxLength: 0 } }), /maxLength/],
    ['a root that is not an object', { type: 'string' }, /#: not type object/],
    ['a pattern only non-unicode reads', object({ a: { type: 'string', pattern: 'a{' } }), /pattern: not a unicode/],
    // Found by the adversary: with `__proto__` required, closed and maxLength 3, `{}` passed.
    ...['__proto__', 'constructor', 'prototype'].map((name): [string, unknown, RegExp] => [
      `a property named ${name}`,
      {
        type: 'object',
        properties: Object.fromEntries([[name, { type: 'string', maxLength: 3 }]]),
        required: [name],
        additionalProperties: false,
      },
      new RegExp(`#/properties: ${name} is not a property name`),
    ]),
    // Found by the second adversary: zod finds an inherited member on `{}`, so `required` passed.
    ...Object.getOwnPropertyNames(Object.prototype).map((name): [string, unknown, RegExp] => [
      `a required property named ${name}`,
      { type: 'object', properties: Object.fromEntries([[name, {}]]), required: [name] },
      new RegExp(`#/properties: ${name} is not a property name`),
    ]),
    [
      'a required toString, declared deeper only',
      object({ o: { type: 'object', properties: { toString: { description: 'x' } }, required: ['toString'] } }),
      /#\/properties\/o\/properties: toString/,
    ],
    [
      'a nested __proto__',
      object({ o: { type: 'object', properties: JSON.parse('{"__proto__": {"type": "string"}}') } }),
      /#\/properties\/o\/properties: __proto__/,
    ],
  ];
  for (const [name, schema, why] of refused)
    it(`${name}: refused (${why.source})`, () => assert.match(uncheckedSchemaPart(schema) ?? '', why));
});

// ---- Generated schemas -------------------------------------------------------------------------

/** The keywords the gateway enforces, written here on their own (docs/mcp.md lists the same). */
const BY_TYPE: Record<string, string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  object: ['properties', 'required', 'additionalProperties'],
  array: ['items', 'minItems', 'maxItems'],
};
const ANY_NODE = [
  'type',
  'enum',
  'const',
  'anyOf',
  'title',
  'description',
  '$comment',
  'examples',
  'default',
  'deprecated',
];

/** Keywords a server may list that the gateway does not enforce (or not where they are put). */
const OTHER_KEYWORDS = [
  'dependencies',
  'dependentRequired',
  'dependentSchemas',
  'if',
  'then',
  'else',
  'patternProperties',
  'propertyNames',
  '$ref',
  '$defs',
  'definitions',
  'allOf',
  'oneOf',
  'not',
  'multipleOf',
  'uniqueItems',
  'contains',
  'prefixItems',
  'minProperties',
  'maxProperties',
  'unevaluatedProperties',
  'additionalItems',
  'nullable',
  'x-vendor',
  'required',
  'format',
  'minimum',
  'maxLength',
  'items',
];

type Schema = boolean | Record<string, unknown>;
const NAMES = ['a', 'b', 'c'];
/** Property names an object parse confuses with the prototype's: a schema naming one is refused. */
const HOSTILE = ['prototype', ...Object.getOwnPropertyNames(Object.prototype)];
const propertyName = fc.oneof(
  { arbitrary: fc.constantFrom(...NAMES), weight: 12 },
  { arbitrary: fc.constantFrom(...HOSTILE), weight: 1 },
);

/** The schema without its `default` values: a default is data, its keys are no property names. */
function withoutDefaults(node: unknown): unknown {
  if (typeof node !== 'object' || node === null) return node;
  if (Array.isArray(node)) return node.map(withoutDefaults);
  const entries = Object.entries(node).filter(([key]) => key !== 'default');
  return Object.fromEntries(
    entries.map(([key, value]) => [
      key,
      key === 'properties' && typeof value === 'object' && value !== null
        ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withoutDefaults(sub)]))
        : withoutDefaults(value),
    ]),
  );
}

/** Schemas of the enforced subset, with some keyword from anywhere added to some nodes. */
function schemas(extras: boolean): fc.Arbitrary<Record<string, unknown>> {
  // A default may break its own node's limits: the gateway must never fill it in.
  const annotations = fc.record(
    { description: fc.constant('d'), title: fc.constant('t'), default: fc.jsonValue({ maxDepth: 1 }) },
    { requiredKeys: [] },
  );
  const extra = extras
    ? fc.option(fc.record({ key: fc.constantFrom(...OTHER_KEYWORDS), value: fc.jsonValue({ maxDepth: 1 }) }), {
        freq: 3,
        nil: undefined,
      })
    : fc.constant(undefined);
  const withExtra = (node: fc.Arbitrary<Schema>) =>
    fc
      .tuple(node, annotations, extra)
      .map(([n, notes, more]) =>
        typeof n === 'boolean' ? n : { ...n, ...notes, ...(more ? { [more.key]: more.value } : {}) },
      );
  const small = fc.integer({ min: -3, max: 3 });
  const count = fc.integer({ min: 0, max: 3 });
  const primitive = fc.oneof(fc.constantFrom('a', 'b', '😀', ''), small, fc.boolean(), fc.constant(null));
  const { node } = fc.letrec<{ node: Schema }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      withExtra(fc.constantFrom<Schema>(true, false, {})),
      withExtra(
        fc.record(
          {
            type: fc.constant('string'),
            minLength: count,
            maxLength: count,
            // Unicode ones too: they mean something else (or nothing) without the `u` flag.
            pattern: fc.constantFrom('^a', 'b$', '^[ab]*$', '^\\p{Nd}+$', '^.$', '^\\p{L}{2}$', '^[😀a]$'),
          },
          { requiredKeys: ['type'] },
        ),
      ),
      withExtra(
        fc.record(
          {
            type: fc.constantFrom('number', 'integer'),
            minimum: small,
            maximum: small,
            exclusiveMinimum: fc.double({ min: -3, max: 3, noNaN: true }),
            exclusiveMaximum: small,
          },
          { requiredKeys: ['type'] },
        ),
      ),
      withExtra(fc.constantFrom<Schema>({ type: 'boolean' }, { type: 'null' }, { type: ['string', 'null'] })),
      withExtra(fc.array(primitive, { minLength: 1, maxLength: 3 }).map((values) => ({ enum: values }))),
      withExtra(primitive.map((value) => ({ const: value }))),
      withExtra(fc.array(tie('node'), { minLength: 1, maxLength: 2 }).map((anyOf) => ({ anyOf }))),
      withExtra(
        fc.record(
          { type: fc.constant('array'), items: tie('node'), minItems: count, maxItems: count },
          { requiredKeys: ['type'] },
        ),
      ),
      withExtra(objectNode(tie('node'))),
    ),
  }));
  return fc.tuple(objectNode(node), extra).map(([root, more]) => ({
    ...root,
    ...(more ? { [more.key]: more.value } : {}),
  }));
}

function objectNode(node: fc.Arbitrary<Schema>): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .record(
      {
        // fromEntries: a `__proto__` name stays an own property, as JSON.parse leaves it.
        properties: fc
          .uniqueArray(fc.tuple(propertyName, node), { maxLength: 3, selector: ([name]) => name })
          .map((entries) => Object.fromEntries(entries)),
        required: fc.subarray([...NAMES, ...HOSTILE]),
        additionalProperties: fc.oneof(fc.boolean(), node),
      },
      { requiredKeys: ['properties'] },
    )
    .map(({ properties, required, ...rest }) => ({
      type: 'object',
      properties,
      // Only declared names: an undeclared one is among the extras.
      ...(required ? { required: required.filter((name) => Object.hasOwn(properties, name)) } : {}),
      ...rest,
    }));
}

/** Every keyword of an offered schema, checked against the list where it stands. */
function keywordsOutOfPlace(schema: Schema, at = '#'): string[] {
  if (typeof schema === 'boolean') return [];
  const type = typeof schema.type === 'string' ? schema.type : undefined;
  const here = [...ANY_NODE, ...(type ? (BY_TYPE[type] ?? []) : []), ...(at === '#' ? ['$schema'] : [])];
  const out = Object.keys(schema)
    .filter((k) => !here.includes(k))
    .map((k) => `${at}: ${k}`);
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  for (const name of (schema.required as string[] | undefined) ?? [])
    if (!Object.hasOwn(properties, name)) out.push(`${at}: required ${name} undeclared`);
  if (schema.format !== undefined && !['date-time', 'email', 'uri', 'uuid'].includes(String(schema.format)))
    out.push(`${at}: format ${String(schema.format)}`);
  const subs: Array<[string, Schema]> = [
    ...Object.entries(properties).map(([k, v]): [string, Schema] => [`properties/${k}`, v]),
    ...((schema.anyOf as Schema[] | undefined) ?? []).map((v, i): [string, Schema] => [`anyOf/${i}`, v]),
    ...(['items', 'additionalProperties'] as const)
      .filter((k) => schema[k] !== undefined && typeof schema[k] === 'object')
      .map((k): [string, Schema] => [k, schema[k] as Schema]),
  ];
  return [...out, ...subs.flatMap(([path, sub]) => keywordsOutOfPlace(sub, `${at}/${path}`))];
}

/** The enforced subset's keywords, as the reference validator reads them. */
interface Subset {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema;
}

/** JSON Schema's own rules for the enforced subset (lengths in characters, as the spec counts them). */
function valid(schema: Schema, value: unknown): boolean {
  if (typeof schema === 'boolean') return schema;
  const s = schema as Subset;
  const types: string[] = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
  const isType = (t: string) =>
    t === 'null'
      ? value === null
      : t === 'integer'
        ? Number.isInteger(value)
        : t === 'array'
          ? Array.isArray(value)
          : t === 'object'
            ? typeof value === 'object' && value !== null && !Array.isArray(value)
            : typeof value === t;
  if (types.length > 0 && !types.some(isType)) return false;
  if (s.enum !== undefined && !s.enum.some((v) => v === value)) return false;
  if (s.const !== undefined && s.const !== value) return false;
  if (s.anyOf !== undefined && !s.anyOf.some((sub) => valid(sub, value))) return false;
  if (typeof value === 'string') {
    const length = [...value].length;
    if (s.minLength !== undefined && length < s.minLength) return false;
    if (s.maxLength !== undefined && length > s.maxLength) return false;
    if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(value)) return false;
  }
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) return false;
    if (s.maximum !== undefined && value > s.maximum) return false;
    if (s.exclusiveMinimum !== undefined && value <= s.exclusiveMinimum) return false;
    if (s.exclusiveMaximum !== undefined && value >= s.exclusiveMaximum) return false;
  }
  if (Array.isArray(value)) {
    if (s.minItems !== undefined && value.length < s.minItems) return false;
    if (s.maxItems !== undefined && value.length > s.maxItems) return false;
    if (s.items !== undefined && !value.every((item) => valid(s.items!, item))) return false;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    const properties = s.properties ?? {};
    if ((s.required ?? []).some((name) => !Object.hasOwn(record, name))) return false;
    for (const [key, v] of Object.entries(record)) {
      const sub = Object.hasOwn(properties, key) ? properties[key]! : (s.additionalProperties ?? true);
      if (!valid(sub, v)) return false;
    }
  }
  return true;
}

/** An object of arguments, hostile names among its keys (own properties, as JSON.parse makes them). */
function argObject(value: fc.Arbitrary<unknown>, maxLength: number): fc.Arbitrary<Record<string, unknown>> {
  const key = fc.oneof(
    { arbitrary: fc.constantFrom('a', 'b', 'c', 'd'), weight: 8 },
    { arbitrary: fc.constantFrom(...HOSTILE), weight: 1 },
  );
  return fc
    .uniqueArray(fc.tuple(key, value), { maxLength, selector: ([k]) => k })
    .map((entries) => Object.fromEntries(entries));
}

/**
 * Arguments near the generated schemas: the same names, short strings, small numbers. No character
 * outside the BMP: zod counts a string's length in UTF-16 units, JSON Schema in characters, so a
 * minLength above 1 lets a shorter string of emoji through (docs/mcp.md says so).
 */
const argValue = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -4, max: 4 }),
    fc.double({ min: -4, max: 4, noNaN: true }),
    fc.string({ unit: fc.constantFrom('a', 'b', ' ', '1', '١', '😀', 'p', '{'), maxLength: 4 }),
    fc.array(tie('value'), { maxLength: 3 }),
    argObject(tie('value'), 3),
  ),
})).value;
const args = argObject(argValue, 4);

describe('any schema a server may list', () => {
  it('is offered only when every keyword in it is one the gateway enforces, where it enforces it', () => {
    fc.assert(
      fc.property(schemas(true), (schema) => {
        if (schemaRefusal(schema) !== undefined) return;
        assert.deepEqual(keywordsOutOfPlace(schema), []);
      }),
      { numRuns: 2000 },
    );
  });

  it('a keyword the gateway does not enforce, anywhere, makes it refused', () => {
    const never = OTHER_KEYWORDS.slice(0, OTHER_KEYWORDS.indexOf('x-vendor') + 1);
    fc.assert(
      fc.property(schemas(true), (schema) => {
        const text = JSON.stringify(schema);
        if (never.some((k) => text.includes(`"${k}":`))) assert.notEqual(schemaRefusal(schema), undefined, text);
      }),
      { numRuns: 2000 },
    );
  });

  it('a property named prototype or after any Object.prototype member, anywhere, makes it refused', () => {
    fc.assert(
      fc.property(schemas(false), (schema) => {
        const text = JSON.stringify(withoutDefaults(schema));
        if (
          HOSTILE.some(
            (name) =>
              text.includes(`"${name}":{`) || text.includes(`"${name}":true`) || text.includes(`"${name}":false`),
          )
        )
          assert.notEqual(schemaRefusal(schema), undefined, text);
      }),
      { numRuns: 1000 },
    );
  });

  it("arguments the gateway accepts satisfy the offered schema (JSON Schema's own rules)", () => {
    let offered = 0;
    fc.assert(
      fc.property(schemas(false), fc.array(args, { minLength: 5, maxLength: 5 }), (schema, candidates) => {
        if (schemaRefusal(schema) !== undefined) return;
        offered++;
        const zod = checkedArgs(schema);
        for (const value of candidates) {
          const parsed = zod.safeParse(value);
          if (!parsed.success) continue;
          const off = `${JSON.stringify(value)} off ${JSON.stringify(schema)}`;
          assert.ok(valid(schema, value), `accepted ${off}`);
          // What the server receives satisfies the schema too: no default filled in beside it.
          assert.ok(valid(schema, parsed.data), `sent ${JSON.stringify(parsed.data)} for ${off}`);
        }
      }),
      { numRuns: 1000 },
    );
    assert.ok(offered > 500, `only ${offered} of 1000 generated schemas were offered`);
  });
});
