// Second adversary, finding 3: a tool's `sensitive` paths were bypassed by an embedded resource
// whose text is JSON, by JSON in a string field, and by a flat key "user.ssn". Whatever the
// placement (JSON strings nested at any depth up to MAX_PARSE_DEPTH, resource items, flat dotted
// keys), the value never reaches what the model sees: the activity's data (dataOf) redacted by the
// paths it marks, or withheld when text left in it names a sensitive field.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_PARSE_DEPTH, WITHHELD, parsedDeep, redactable } from '../../activities/mcp/call-tool';
import { redactPaths } from '../../common/tools/redact';

const SSN = '123-45-6789';

/** As the activity does: data, the paths it marks, redacted or withheld. */
function shown(items: unknown[], paths: string[]): string {
  const data = items.length === 1 ? items[0] : items;
  const marked = Array.isArray(data) ? [...paths, ...paths.flatMap((p) => [`*.${p}`, `*.resource.text.${p}`])] : paths;
  if (!redactable(data, paths)) return WITHHELD;
  return JSON.stringify(redactPaths(data, marked).data);
}

/** The object {a:{b:{ssn}}} for path a.b.ssn, with any level written as JSON text or a flat dotted key. */
const placed = (segments: string[], how: number[]): unknown => {
  if (segments.length === 0) return SSN;
  const [first, ...rest] = segments as [string, ...string[]];
  const h = how[0] ?? 0;
  // Flat key: this segment and the next joined.
  if (h === 2 && rest.length > 0) {
    const [second, ...after] = rest as [string, ...string[]];
    return { [`${first}.${second}`]: placed(after, how.slice(1)), other: 'x' };
  }
  const inner = placed(rest, how.slice(1));
  return { [first]: h === 1 ? JSON.stringify(inner) : inner, other: 'x' };
};

const segment = fc.constantFrom('user', 'payload', 'ssn', 'data', 'card');

describe('MCP sensitive paths whatever the placement (property)', () => {
  it('the value at a sensitive path never reaches the observation', () => {
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(2), { minLength: 4, maxLength: 4 }),
        fc.nat(MAX_PARSE_DEPTH - 4),
        fc.constantFrom('text', 'resource', 'second'),
        (segments, how, wraps, where) => {
          let text = JSON.stringify(placed(segments, how));
          for (let i = 0; i < wraps; i++) text = JSON.stringify(text); // JSON wrapped in JSON strings
          const item = parsedDeep(text);
          const items =
            where === 'text'
              ? [item]
              : where === 'resource'
                ? ['see resource', { type: 'resource', resource: { uri: 'mem://x', text: item } }]
                : ['first', item];
          const out = shown(items, [segments.join('.')]);
          assert.ok(!out.includes(SSN), `${segments.join('.')} ${JSON.stringify(how)} ${where}: ${out}`);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("the adversary's three results: resource JSON, JSON in a field, a flat dotted key", () => {
    const resource = [
      'see resource',
      { type: 'resource', resource: { uri: 'mem://x', text: parsedDeep(JSON.stringify({ ssn: SSN, name: 'ok' })) } },
    ];
    assert.ok(!shown(resource, ['ssn']).includes(SSN));
    assert.match(shown(resource, ['ssn']), /"name":"ok"/);
    const nested = parsedDeep(JSON.stringify({ payload: JSON.stringify({ ssn: SSN }), other: 1 }));
    assert.deepEqual(JSON.parse(shown([nested], ['payload.ssn'])), { payload: { ssn: '[redacted]' }, other: 1 });
    const dotted = parsedDeep(JSON.stringify({ 'user.ssn': SSN, user: { name: 'n' } }));
    assert.deepEqual(JSON.parse(shown([dotted], ['user.ssn'])), { 'user.ssn': '[redacted]', user: { name: 'n' } });
  });

  it('text that is not JSON and names a sensitive field is withheld; text that does not is shown', () => {
    assert.equal(shown(['see resource', { note: 'ssn 333-44-5555' }], ['ssn']), WITHHELD);
    assert.equal(shown(['{"ssn": "1", broken'], ['ssn']), WITHHELD);
    assert.equal(shown([{ name: 'ok', ssn: SSN }], ['ssn']), '{"name":"ok","ssn":"[redacted]"}');
    assert.equal(shown(['plain', { name: 'ok' }], ['ssn']), '["plain",{"name":"ok"}]');
  });
});
