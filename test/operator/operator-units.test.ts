// Pure pieces of the operator's view: durations, visibility queries, Temporal Cloud settings,
// metric label bounds, the metrics port setting, search attribute values, confirmation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { canConfirm, confirm } from '../../cli/confirm';
import { formatDuration, parseDuration } from '../../cli/duration';
import { FilterError, runQuery } from '../../client/run-query';
import {
  connectionOptions,
  describeConnection,
  runUrl,
  temporalEnv,
  unreachableMessage,
} from '../../runtime/temporal-env';
import { EXIT } from '../../client/agent-error';
import { exitCodeOf } from '../../cli/exit-codes';
import { snakeCaseKeys } from '../../cli/output';
import type { StopReason } from '../../common/stop-reasons';
import { metricsPortFromEnv } from '../../worker/metrics-server';
import { stopReasonLabel, toolLabel } from '../../worker/metrics';
import {
  attributePairs,
  GOAL_ATTRIBUTE_CHARS,
  goalAttribute,
  keywordValue,
  MAX_KEYWORD_CHARS,
} from '../../common/temporal/search-attributes';
import { registryOfDomain } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';

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
    // Every reason a run records with a suffix matches by its name, as the stop-reason table spells it.
    for (const name of ['policy_denied', 'tool_error', 'invalid_action', 'budget_exhausted'])
      assert.equal(
        runQuery({ stopReasons: [name] }),
        `WorkflowType = 'reactAgent' AND AgentStopReason STARTS_WITH '${name}:'`,
      );
    assert.equal(
      runQuery({ stopReasons: ['policy_denied:other_user'] }),
      "WorkflowType = 'reactAgent' AND AgentStopReason = 'policy_denied:other_user'",
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

describe('Temporal connection settings (local, Cloud with an API key, mTLS, profiles)', () => {
  const pem = (what: string) => `-----BEGIN ${what}-----\n${what.toLowerCase()}\n-----END ${what}-----\n`;
  /** temporalEnv with its warnings collected; HOME points nowhere, so no user's temporal.toml is read. */
  function settings(vars: NodeJS.ProcessEnv, flags = {}) {
    const warnings: string[] = [];
    const env = temporalEnv({ HOME: '/nonexistent', ...vars }, flags, (line) => warnings.push(line));
    return { env, warnings };
  }

  it('defaults to the local dev server, plain gRPC', () => {
    const { env, warnings } = settings({});
    assert.equal(env.address, 'localhost:7233');
    assert.equal(env.namespace, 'default');
    assert.equal(env.tls, undefined);
    assert.deepEqual(connectionOptions(env), { address: 'localhost:7233' });
    assert.equal(runUrl(env, 'a b'), 'http://localhost:8233/namespaces/default/workflows/a%20b');
    assert.deepEqual(warnings, []);
    assert.match(unreachableMessage(env), /start it with `npm run server`/);
  });

  it('a remote server that cannot be reached is not told to start the local one', () => {
    const { env } = settings({ TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_TLS: 'true' });
    const message = unreachableMessage(env);
    assert.doesNotMatch(message, /npm run server/);
    assert.match(message, /^cannot reach Temporal at temporal\.internal:7233 \(TLS\); check the address/);
  });

  it('an API key turns on TLS and sends the namespace header; the key is never described', () => {
    const { env } = settings({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.acct',
      TEMPORAL_API_KEY: 'secret-key',
    });
    assert.deepEqual(connectionOptions(env), {
      address: 'ns.acct.tmprl.cloud:7233',
      tls: {},
      apiKey: 'secret-key',
      metadata: { 'temporal-namespace': 'ns.acct' },
    });
    assert.equal(env.uiUrl, 'https://cloud.temporal.io');
    assert.doesNotMatch(describeConnection(env), /secret/);
    assert.match(describeConnection(env), /TLS, API key/);
  });

  it('mTLS from the standard names: files (_PATH) or the PEM itself (_DATA), CA and server name', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tls-'));
    writeFileSync(path.join(dir, 'client.pem'), pem('CERTIFICATE'));
    writeFileSync(path.join(dir, 'ca.pem'), pem('CA'));
    const { env, warnings } = settings({
      TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem'),
      TEMPORAL_TLS_CLIENT_KEY_DATA: pem('PRIVATE KEY'),
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    assert.equal(env.tls!.clientCertPair!.crt.toString(), pem('CERTIFICATE'));
    assert.equal(env.tls!.clientCertPair!.key.toString(), pem('PRIVATE KEY'));
    assert.equal(env.tls!.serverRootCACertificate!.toString(), pem('CA'));
    assert.equal(env.tls!.serverNameOverride, 'temporal.internal');
    assert.equal(connectionOptions(env).apiKey, undefined);
    assert.match(describeConnection(env), /mTLS/);
    assert.deepEqual(warnings, []);
  });

  it('the old names TEMPORAL_TLS_CERT/KEY/CA still work, with one deprecation line; a standard name wins', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tls-'));
    writeFileSync(path.join(dir, 'client.pem'), pem('CERTIFICATE'));
    writeFileSync(path.join(dir, 'other.pem'), pem('OTHER'));
    const { env, warnings } = settings({
      TEMPORAL_TLS_CERT: path.join(dir, 'client.pem'),
      TEMPORAL_TLS_KEY: pem('PRIVATE KEY'),
      TEMPORAL_TLS_CA: pem('CA'),
    });
    assert.equal(env.tls!.clientCertPair!.crt.toString(), pem('CERTIFICATE'));
    assert.equal(env.tls!.clientCertPair!.key.toString(), pem('PRIVATE KEY'));
    assert.equal(env.tls!.serverRootCACertificate!.toString(), pem('CA'));
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!,
      /^deprecated environment variables: TEMPORAL_TLS_CERT \(now TEMPORAL_TLS_CLIENT_CERT_PATH or _DATA\), TEMPORAL_TLS_KEY .*, TEMPORAL_TLS_CA /,
    );

    const both = settings({
      TEMPORAL_TLS_CA: path.join(dir, 'client.pem'),
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'other.pem'),
    });
    assert.equal(both.env.tls!.serverRootCACertificate!.toString(), pem('OTHER'));
    assert.equal(both.warnings.length, 1);
  });

  it('a temporal.toml profile, overridden by the environment, overridden by the flags', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'toml-'));
    const file = path.join(dir, 'temporal.toml');
    writeFileSync(
      file,
      [
        '[profile.default]',
        'address = "default-host:7233"',
        '[profile.prod]',
        'address = "prod-host:7233"',
        'namespace = "prod-ns"',
        'api_key = "prod-key"',
        '[profile.prod.grpc_meta]',
        'team = "ops"',
      ].join('\n'),
    );
    assert.equal(settings({ TEMPORAL_CONFIG_FILE: file }).env.address, 'default-host:7233');
    const prod = settings({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' }).env;
    assert.deepEqual([prod.address, prod.namespace, prod.apiKey], ['prod-host:7233', 'prod-ns', 'prod-key']);
    assert.deepEqual(connectionOptions(prod).metadata, { team: 'ops', 'temporal-namespace': 'prod-ns' });
    const byFlag = settings({ TEMPORAL_CONFIG_FILE: file }, { profile: 'prod' }).env;
    assert.equal(byFlag.namespace, 'prod-ns');
    const envWins = settings({
      TEMPORAL_CONFIG_FILE: file,
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_NAMESPACE: 'env-ns',
    }).env;
    assert.deepEqual([envWins.address, envWins.namespace], ['prod-host:7233', 'env-ns']);
    const flagsWin = settings(
      {
        TEMPORAL_CONFIG_FILE: file,
        TEMPORAL_PROFILE: 'prod',
        TEMPORAL_ADDRESS: 'env-host:7233',
        TEMPORAL_NAMESPACE: 'env-ns',
      },
      { address: 'flag-host:7233', namespace: 'flag-ns' },
    ).env;
    assert.deepEqual([flagsWin.address, flagsWin.namespace], ['flag-host:7233', 'flag-ns']);
    assert.throws(() => settings({ TEMPORAL_CONFIG_FILE: file }, { profile: 'nope' }), /Profile 'nope' not found/);
  });

  it('rejects half or contradictory settings with a clear message', () => {
    assert.throws(
      () => settings({ TEMPORAL_TLS_CLIENT_CERT_PATH: '/x.pem' }),
      /TEMPORAL_TLS_CLIENT_CERT_\* and TEMPORAL_TLS_CLIENT_KEY_\* go together/,
    );
    assert.throws(() => settings({ TEMPORAL_TLS_CERT: '/x.pem' }), /go together/);
    assert.throws(
      () =>
        settings({
          TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent.pem',
          TEMPORAL_TLS_CLIENT_KEY_PATH: '/nonexistent.key',
        }),
      /cannot read \/nonexistent\.(pem|key) \(ENOENT\)/,
    );
    assert.throws(() => settings({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }), /contradicts/);
    assert.throws(() => settings({ TEMPORAL_TLS: 'maybe' }), /TEMPORAL_TLS must be true or false/);
    assert.deepEqual(settings({ TEMPORAL_TLS: 'true' }).env.tls, {});
    assert.equal(settings({ TEMPORAL_TLS: 'false' }).env.tls, undefined);
    // Empty values are unset, as they always were.
    assert.equal(settings({ TEMPORAL_ADDRESS: '', TEMPORAL_API_KEY: '' }).env.address, 'localhost:7233');
  });
});

describe('exit codes and machine output', () => {
  it('a run ends in one of four families, each with its exit code', () => {
    const cases: Array<[string, number]> = [
      ['success', 0],
      ['max_steps', 4],
      ['max_seconds', 4],
      ['tool_denied:issue_refund', 4],
      ['policy_denied:refund_cap', 4],
      ['loop_detected', 4],
      ['approval_timeout', 4],
      ['invalid_action:bad_json', 4],
      ['cancelled', 5],
      ['llm_error', 6],
      ['llm_timeout', 6],
      ['tool_error:search_policy', 6],
    ];
    for (const [reason, code] of cases) assert.equal(exitCodeOf({ stop_reason: reason as StopReason }), code, reason);
    assert.deepEqual(
      [EXIT.RUN_STOPPED, EXIT.RUN_CANCELLED, EXIT.RUN_FAILED].map((c) => new Set([0, 1, 2, 3]).has(c)),
      [false, false, false],
    );
  });

  it('trace events get snake_case keys, deeply; values are left alone', () => {
    assert.deepEqual(
      snakeCaseKeys({
        decisionSummary: 'call x(userId)',
        remainingBudget: { toolCalls: 1, wallTimeMs: 2 },
        list: [{ aB: 1 }],
      }),
      { decision_summary: 'call x(userId)', remaining_budget: { tool_calls: 1, wall_time_ms: 2 }, list: [{ a_b: 1 }] },
    );
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
  it('the goal: one line, at most GOAL_ATTRIBUTE_CHARS characters, a cut one ends with …', () => {
    assert.equal(goalAttribute('  Refund\n\tnow,   please '), 'Refund now, please');
    const long = goalAttribute(`${'😀'.repeat(100)} ${'x'.repeat(500)}`);
    assert.equal(Array.from(long).length, GOAL_ATTRIBUTE_CHARS);
    assert.ok(long.endsWith('x…'));
    assert.equal(goalAttribute('y'.repeat(GOAL_ATTRIBUTE_CHARS)), 'y'.repeat(GOAL_ATTRIBUTE_CHARS));
  });

  it('are bounded and complete', () => {
    assert.equal(keywordValue('x'.repeat(5_000)).length, MAX_KEYWORD_CHARS);
    const pairs = attributePairs(
      {
        status: 'stopped',
        stopReason: `policy_denied:${'x'.repeat(500)}`,
        step: 3,
        toolCalls: 2,
        principal: '42',
      },
      registryOfDomain(supportDomain),
    );
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
    const denied = attributePairs(
      {
        status: 'stopped',
        stopReason: `tool_denied:${'x'.repeat(500)}`,
        step: 3,
        toolCalls: 2,
        principal: '42',
      },
      registryOfDomain(supportDomain),
    );
    assert.equal(denied.find((p) => p.key.name === 'AgentStopReason')?.value, 'tool_denied:unknown');
    assert.equal(
      attributePairs(
        { status: 'running', step: 0, toolCalls: 0, principal: '1' },
        registryOfDomain(supportDomain),
      ).some((p) => p.key.name === 'AgentStopReason'),
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
