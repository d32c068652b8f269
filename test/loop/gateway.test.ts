import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkToolCall } from '../../workflows/agent/gateway';
import type { GatewayContext } from '../../workflows/agent/gateway';
import { argsHash, stableJson } from '../../common/tools/hash';
import { registryOfDomain } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';

const base: GatewayContext = {
  maxToolCalls: 3,
  allow: ['get_user_profile', 'search_policy', 'not_registered'],
  registry: registryOfDomain(supportDomain),
  toolCalls: 0,
  seenCalls: [],
};

describe('gateway', () => {
  it('allows an allowlisted, registered call with valid args', () => {
    const d = checkToolCall('get_user_profile', { user_id: 42 }, base);
    assert.equal(d.allowed, true);
    assert.equal(d.allowed && d.signature, `get_user_profile:${argsHash({ user_id: 42 })}`);
  });

  it('stops at the tool-call budget before anything else', () => {
    const d = checkToolCall('get_user_billing', {}, { ...base, toolCalls: 3 });
    assert.deepEqual(d.allowed ? null : d.reason, 'max_tool_calls');
  });

  it('denies a tool that is not on the allowlist (deny by default)', () => {
    const d = checkToolCall('get_user_billing', { user_id: 42 }, base);
    assert.equal(d.allowed ? null : d.reason, 'tool_denied:get_user_billing');
    const none = checkToolCall('get_user_profile', { user_id: 42 }, { ...base, allow: [] });
    assert.equal(none.allowed ? null : none.reason, 'tool_denied:get_user_profile');
  });

  it('reports an allowed but unknown tool as missing', () => {
    const d = checkToolCall('not_registered', {}, base);
    assert.equal(d.allowed ? null : d.reason, 'tool_missing:not_registered');
  });

  it('does not treat inherited object keys as registered tools', () => {
    const d = checkToolCall('constructor', {}, { ...base, allow: ['constructor'] });
    assert.equal(d.allowed ? null : d.reason, 'tool_missing:constructor');
  });

  for (const [args, what] of [
    [{}, 'a missing argument'],
    [{ user_id: '42' }, 'a string where an integer is due'],
    [{ user_id: 4.2 }, 'a fraction'],
    [{ user_id: 42, admin: true }, 'an unknown argument'],
  ] as const) {
    it(`rejects ${what} as tool_bad_args`, () => {
      const d = checkToolCall('get_user_profile', args as Record<string, unknown>, base);
      assert.equal(d.allowed ? null : d.reason, 'tool_bad_args:get_user_profile');
    });
  }

  it('detects a repeated call regardless of key order', () => {
    const first = checkToolCall('search_policy', { query: 'refund' }, base);
    assert.ok(first.allowed);
    const again = checkToolCall(
      'search_policy',
      { query: 'refund' },
      { ...base, toolCalls: 1, seenCalls: [first.signature] },
    );
    assert.equal(again.allowed ? null : again.reason, 'loop_detected');
    const other = checkToolCall(
      'search_policy',
      { query: 'billing' },
      { ...base, toolCalls: 1, seenCalls: [first.signature] },
    );
    assert.equal(other.allowed, true);
  });

  it('counts the call budget before the loop check', () => {
    const first = checkToolCall('search_policy', { query: 'refund' }, base);
    assert.ok(first.allowed);
    const d = checkToolCall(
      'search_policy',
      { query: 'refund' },
      { ...base, toolCalls: 3, seenCalls: [first.signature] },
    );
    assert.equal(d.allowed ? null : d.reason, 'max_tool_calls');
  });
});

describe('stable hashing', () => {
  it('ignores key order at every depth', () => {
    const a = { b: 1, a: { y: [1, { q: 1, p: 2 }], x: 'z' } };
    const b = { a: { x: 'z', y: [1, { p: 2, q: 1 }] }, b: 1 };
    assert.equal(stableJson(a), stableJson(b));
    assert.equal(argsHash(a), argsHash(b));
  });

  it('distinguishes different values and array orders', () => {
    assert.notEqual(argsHash({ user_id: 42 }), argsHash({ user_id: 7 }));
    assert.notEqual(argsHash({ l: [1, 2] }), argsHash({ l: [2, 1] }));
    assert.match(argsHash({}), /^[0-9a-f]{12}$/);
  });

  it('is sha256 of the sorted JSON, first 12 hex chars', () => {
    // python: hashlib.sha256(b'{"user_id":42}').hexdigest()[:12]
    assert.equal(stableJson({ user_id: 42 }), '{"user_id":42}');
    assert.equal(argsHash({ user_id: 42 }), 'feaa769a39ae');
  });
});
