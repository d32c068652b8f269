// Which recorded JSON Schemas the workflow can enforce in full. zod's fromJSONSchema accepts more
// than it checks: a limit with no `type` beside it (`{maximum: 100}`), a type list with object
// keywords, and allOf members lose their limits silently, so arguments off the schema would pass
// the gateway. A tool whose schema uses such a form is not offered (deny by default), like one
// zod refuses outright. Pure: the workflow calls it.

const KEYWORD_TYPES: Record<string, readonly string[]> = {
  minimum: ['number', 'integer'],
  maximum: ['number', 'integer'],
  exclusiveMinimum: ['number', 'integer'],
  exclusiveMaximum: ['number', 'integer'],
  multipleOf: ['number', 'integer'],
  minLength: ['string'],
  maxLength: ['string'],
  pattern: ['string'],
  format: ['string'],
  items: ['array'],
  prefixItems: ['array'],
  minItems: ['array'],
  maxItems: ['array'],
  uniqueItems: ['array'],
  contains: ['array'],
  minContains: ['array'],
  maxContains: ['array'],
  properties: ['object'],
  required: ['object'],
  additionalProperties: ['object'],
  patternProperties: ['object'],
  propertyNames: ['object'],
  minProperties: ['object'],
  maxProperties: ['object'],
};

/** Keywords whose value is one subschema, or a map or list of them. */
const ONE = ['additionalProperties', 'items', 'contains', 'propertyNames', 'not'];
const MAP = ['properties', 'patternProperties', '$defs', 'definitions'];
const LIST = ['anyOf', 'oneOf', 'prefixItems', 'items'];

/** Why the schema cannot be enforced in full, or undefined when it can. */
export function uncheckedSchemaPart(schema: unknown, at = '#'): string | undefined {
  if (typeof schema === 'boolean') return undefined;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return `${at}: not a schema`;
  const node = schema as Record<string, unknown>;
  if ('allOf' in node) return `${at}: allOf`;
  for (const [keyword, types] of Object.entries(KEYWORD_TYPES)) {
    if (!(keyword in node)) continue;
    if (typeof node.type !== 'string') return `${at}: ${keyword} without one type beside it`;
    if (!types.includes(node.type)) return `${at}: ${keyword} on type ${node.type}`;
  }
  for (const key of ONE) {
    const sub = node[key];
    if (sub !== undefined && !Array.isArray(sub)) {
      const why = uncheckedSchemaPart(sub, `${at}/${key}`);
      if (why) return why;
    }
  }
  for (const key of MAP) {
    const subs = node[key];
    if (subs === undefined) continue;
    if (subs === null || typeof subs !== 'object' || Array.isArray(subs)) return `${at}/${key}: not a map of schemas`;
    for (const [name, sub] of Object.entries(subs)) {
      const why = uncheckedSchemaPart(sub, `${at}/${key}/${name}`);
      if (why) return why;
    }
  }
  for (const key of LIST) {
    const subs = node[key];
    if (!Array.isArray(subs)) continue;
    for (const [i, sub] of subs.entries()) {
      const why = uncheckedSchemaPart(sub, `${at}/${key}/${i}`);
      if (why) return why;
    }
  }
  return undefined;
}
