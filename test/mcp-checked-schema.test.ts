// Which recorded JSON Schemas the gateway enforces in full (common/mcp/checked-schema.ts): the forms
// zod's fromJSONSchema would accept while dropping a limit are refused, typed ones pass.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { uncheckedSchemaPart } from '../common/mcp/checked-schema';

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
  ];
  for (const [name, schema, bad] of enforced)
    it(`${name}: accepted, and zod refuses the bad arguments`, () => {
      assert.equal(uncheckedSchemaPart(schema), undefined);
      assert.equal(z.fromJSONSchema(schema as never).safeParse(bad).success, false);
    });

  const refused: Array<[string, unknown, RegExp]> = [
    ['a maximum with no type', object({ amount: { maximum: 100 } }), /amount: maximum without one type/],
    ['allOf', object({ amount: { allOf: [{ type: 'number' }, { maximum: 100 }] } }), /allOf/],
    ['object keywords under a type list', object({ o: { type: ['object', 'null'], required: ['x'] } }), /required/],
    ['a string limit on a number', object({ n: { type: 'number', maxLength: 3 } }), /maxLength on type number/],
    ['items without a type', object({ l: { items: { type: 'string' } } }), /items without one type/],
    ['a limit deep in $defs', { ...object({}), $defs: { x: { minimum: 1 } } }, /\$defs\/x: minimum/],
  ];
  for (const [name, schema, why] of refused)
    it(`${name}: refused (${why.source})`, () => assert.match(uncheckedSchemaPart(schema) ?? '', why));
});
