// Pure pieces of the operator's view: durations, visibility queries, Temporal Cloud settings,
// metric label bounds, the metrics port setting, search attribute values, confirmation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { canConfirm, confirm } from '../client/confirm';
import { formatDuration, parseDuration } from '../client/duration';
import { FilterError, runQuery } from '../client/run-query';
import { connectionOptions, describeConnection, runUrl, temporalEnv } from '../runtime/temporal-env';
import { metricsPortFromEnv } from '../worker/metrics-server';
import { stopReasonLabel, toolLabel } from '../worker/metrics';
import { attributePairs, keywordValue, MAX_KEYWORD_CHARS } from '../common/search-attributes';

describe('durations', () => {
  it('parses operator durations', () => {
    assert.equal(parseDuration('90s'), 90_000);
    assert.equal(parseDuration('10m'), 600_000);
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('2d'), 172_800_000);
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('1.5s'), 1_500);
    for (const bad of ['', '10', 'm', '10 m', '-5s', '0s', '5x', '1h 30m', '10m!'])
      assert.throws(() => parseDuration(bad), RangeError, bad);
  });

  it('formats them back', () => {
    assert.deepEqual([2_000, 90_000, 600_000, 5_400_000, 250].map(formatDuration), [
      '2s',
      '1m30s',
      '10m',
      '1h30m',
      '250ms',
    ]);
  });
});

describe('visibility queries', () => {
  it('maps statuses, stop reasons (exact and family) and age to the search attributes', () => {
    assert.equal(runQuery({}), "WorkflowType = 'reactAgent'");
    assert.equal(runQuery({ statuses: ['running'] }), "WorkflowType = 'reactAgent' AND ExecutionStatus = 'Running'");
    assert.equal(
      runQuery({ statuses: ['ok', 'stopped'] }),
      "WorkflowType = 'reactAgent' AND AgentStatus IN ('ok', 'stopped')",
    );
    assert.equal(
      runQuery({ statuses: ['running', 'cancelled'] }),
      "WorkflowType = 'reactAgent' AND (ExecutionStatus = 'Running' OR AgentStatus = 'cancelled')",
    );
    assert.equal(
      runQuery({ stopReasons: ['loop_detected', 'tool_denied'] }),
      "WorkflowType = 'reactAgent' AND (AgentStopReason = 'loop_detected' OR AgentStopReason STARTS_WITH 'tool_denied:')",
    );
    assert.equal(
      runQuery({ openOnly: true, startedBefore: new Date('2026-01-02T03:04:05.678Z') }),
      "WorkflowType = 'reactAgent' AND ExecutionStatus = 'Running' AND StartTime < '2026-01-02T03:04:05.678Z'",
    );
  });

  it('refuses values that could change the query', () => {
    assert.throws(() => runQuery({ statuses: ['done'] }), FilterError);
    for (const reason of ["x' OR 'a'='a", 'a"b', 'a\\b', 'a b'])
      assert.throws(() => runQuery({ stopReasons: [reason] }), FilterError, reason);
  });
});

describe('Temporal connection settings (local, Cloud with an API key, mTLS)', () => {
  it('defaults to the local dev server, plain gRPC', () => {
    const env = temporalEnv({});
    assert.equal(env.address, 'localhost:7233');
    assert.equal(env.namespace, 'default');
    assert.equal(env.tls, undefined);
    assert.deepEqual(connectionOptions(env), { address: 'localhost:7233' });
    assert.equal(runUrl(env, 'a b'), 'http://localhost:8233/namespaces/default/workflows/a%20b');
  });

  it('an API key turns on TLS and sends the namespace header; the key is never described', () => {
    const env = temporalEnv({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.acct',
      TEMPORAL_API_KEY: 'secret-key',
    });
    assert.deepEqual(connectionOptions(env), {
      address: 'ns.acct.tmprl.cloud:7233',
      tls: { serverNameOverride: undefined, serverRootCACertificate: undefined, clientCertPair: undefined },
      apiKey: 'secret-key',
      metadata: { 'temporal-namespace': 'ns.acct' },
    });
    assert.equal(env.uiUrl, 'https://cloud.temporal.io');
    assert.doesNotMatch(describeConnection(env), /secret/);
    assert.match(describeConnection(env), /TLS, API key/);
  });

  it('mTLS reads the certificate and key from files or inline PEM', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tls-'));
    writeFileSync(path.join(dir, 'client.pem'), '-----BEGIN CERTIFICATE-----\ncert\n-----END CERTIFICATE-----\n');
    const env = temporalEnv({
      TEMPORAL_TLS_CERT: path.join(dir, 'client.pem'),
      TEMPORAL_TLS_KEY: '-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----',
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    assert.match(env.tls!.clientCertPair!.crt.toString(), /BEGIN CERTIFICATE/);
    assert.match(env.tls!.clientCertPair!.key.toString(), /BEGIN PRIVATE KEY/);
    assert.equal(env.tls!.serverNameOverride, 'temporal.internal');
    assert.equal(connectionOptions(env).apiKey, undefined);
    assert.match(describeConnection(env), /mTLS/);
  });

  it('rejects half or contradictory settings with a clear message', () => {
    assert.throws(
      () => temporalEnv({ TEMPORAL_TLS_CERT: '/x.pem' }),
      /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together/,
    );
    assert.throws(
      () => temporalEnv({ TEMPORAL_TLS_CERT: '/nonexistent.pem', TEMPORAL_TLS_KEY: '/nonexistent.key' }),
      /TEMPORAL_TLS_CERT: cannot read \/nonexistent.pem \(ENOENT\)/,
    );
    assert.throws(() => temporalEnv({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }), /contradicts/);
    assert.throws(() => temporalEnv({ TEMPORAL_TLS: 'maybe' }), /TEMPORAL_TLS must be true or false/);
    assert.deepEqual(temporalEnv({ TEMPORAL_TLS: 'true' }).tls, {
      serverNameOverride: undefined,
      serverRootCACertificate: undefined,
      clientCertPair: undefined,
    });
  });
});

describe('metrics settings and labels', () => {
  it('AGENT_METRICS_PORT: default 9464, a port, 0 for any, off', () => {
    assert.equal(metricsPortFromEnv({}), 9464);
    assert.equal(metricsPortFromEnv({ AGENT_METRICS_PORT: '9100' }), 9100);
    assert.equal(metricsPortFromEnv({ AGENT_METRICS_PORT: '0' }), 0);
    assert.equal(metricsPortFromEnv({ AGENT_METRICS_PORT: 'off' }), 'off');
    for (const bad of ['http', '-1', '70000', '9464x'])
      assert.throws(() => metricsPortFromEnv({ AGENT_METRICS_PORT: bad }), /AGENT_METRICS_PORT/);
  });

  it('model-chosen names never become label values', () => {
    assert.equal(toolLabel('search_policy'), 'search_policy');
    assert.equal(toolLabel('rm -rf /'), '(unregistered)');
    assert.equal(toolLabel('__proto__'), '(unregistered)');
    assert.equal(stopReasonLabel('success'), 'success');
    assert.equal(stopReasonLabel('invalid_action:bad_json'), 'invalid_action:bad_json');
    assert.equal(stopReasonLabel('tool_denied:search_policy'), 'tool_denied:search_policy');
    assert.equal(stopReasonLabel('tool_missing:drop_tables'), 'tool_missing:(unregistered)');
  });
});

describe('search attribute values', () => {
  it('are bounded and complete', () => {
    assert.equal(keywordValue('x'.repeat(5_000)).length, MAX_KEYWORD_CHARS);
    const pairs = attributePairs({
      status: 'stopped',
      stopReason: `policy_denied:${'x'.repeat(500)}`,
      step: 3,
      toolCalls: 2,
      principal: '42',
    });
    assert.deepEqual(
      pairs.map((p) => [p.key.name, typeof p.value === 'string' ? p.value.length : p.value]),
      [
        ['AgentStatus', 7],
        ['AgentStep', 3],
        ['AgentToolCalls', 2],
        ['AgentPrincipal', 2],
        ['AgentStopReason', MAX_KEYWORD_CHARS],
      ],
    );
    // A model-chosen tool name never reaches the (unencrypted) attribute.
    const denied = attributePairs({
      status: 'stopped',
      stopReason: `tool_denied:${'x'.repeat(500)}`,
      step: 3,
      toolCalls: 2,
      principal: '42',
    });
    assert.equal(denied.find((p) => p.key.name === 'AgentStopReason')?.value, 'tool_denied:unknown');
    assert.equal(
      attributePairs({ status: 'running', step: 0, toolCalls: 0, principal: '1' }).some(
        (p) => p.key.name === 'AgentStopReason',
      ),
      false,
    );
  });
});

describe('confirmation', () => {
  it('only a terminal can confirm, and only y/yes counts', async () => {
    assert.equal(canConfirm(Object.assign(new PassThrough(), { isTTY: false })), false);
    assert.equal(canConfirm(Object.assign(new PassThrough(), { isTTY: true })), true);
    for (const [typed, expected] of [
      ['y\n', true],
      ['YES\n', true],
      ['n\n', false],
      ['\n', false],
      ['', false],
    ] as const) {
      const input = new PassThrough();
      let prompt = '';
      const answer = confirm('go? ', input, { write: (t: string) => (prompt += t) });
      input.end(typed);
      assert.equal(await answer, expected, JSON.stringify(typed));
      assert.equal(prompt, 'go? ');
    }
  });
});
