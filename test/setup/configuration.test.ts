// The environment variables live in one table (runtime/env-vars.ts): docs/configuration.md is
// written from it, the deployment passes only names it knows, and a bad value is one clear line.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import fc from 'fast-check';
import { ENV_VAR_NAMES, ENV_VARS, readEnv, SECRET_ENV_NAMES } from '../../runtime/env-vars';
import { localServerConfig } from '../../local-servers/local-server';
import { SECRET_ENV_VARS } from '../../activities/secrets';
import { REPO_ROOT } from '../helpers/harness';

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const OWN_NAME = /\b(?:AGENT|OPENAI)_[A-Z0-9_]+\b/g;

describe('docs/configuration.md', () => {
  const docs = read('docs/configuration.md');

  it('has a row for every variable in the table, with its default', () => {
    for (const name of ENV_VAR_NAMES) {
      const row = docs.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
      assert.ok(row, `${name} has no row`);
      const fallback = ENV_VARS[name].default;
      if (fallback) assert.ok(row.includes(fallback), `${name}: default "${fallback}" not in ${row}`);
    }
  });

  it('names no AGENT_* or OPENAI_* variable the table does not have', () => {
    const documented = new Set(docs.match(OWN_NAME));
    assert.deepEqual(
      [...documented].filter((name) => !(ENV_VAR_NAMES as string[]).includes(name)),
      [],
    );
  });
});

describe('the deployment', () => {
  it('passes the worker, the init job and the codec server only variables the table knows', () => {
    // merge: the file shares environment blocks between services with YAML merge keys (<<).
    const compose = parseYaml(read('docker-compose.yml'), { merge: true }) as {
      services: Record<string, { environment?: Record<string, string> }>;
    };
    for (const service of ['worker', 'temporal-init', 'codec-server']) {
      const names = Object.keys(compose.services[service]?.environment ?? {}).filter((n) => !n.startsWith('TEMPORAL_'));
      for (const name of names) assert.ok((ENV_VAR_NAMES as string[]).includes(name), `${service}: ${name}`);
    }
  });
});

describe('reading a variable', () => {
  it('parses defaults and values', () => {
    assert.equal(readEnv('OPENAI_TIMEOUT_SECONDS', {}), 60);
    assert.equal(readEnv('OPENAI_TIMEOUT_SECONDS', { OPENAI_TIMEOUT_SECONDS: '2.5' }), 2.5);
    assert.equal(readEnv('OPENAI_MODEL', { OPENAI_MODEL: ' ' }), 'gpt-4.1-mini');
    assert.equal(readEnv('AGENT_METRICS_PORT', {}), 9464);
    assert.equal(readEnv('AGENT_METRICS_PORT', { AGENT_METRICS_PORT: 'OFF' }), 'off');
    assert.equal(readEnv('AGENT_METRICS_PORT', { AGENT_METRICS_PORT: '0' }), 0);
    assert.equal(readEnv('AGENT_SDK_METRICS_PORT', {}), undefined);
    assert.deepEqual(readEnv('AGENT_TOOL_PAUSE_TOOLS', { AGENT_TOOL_PAUSE_TOOLS: ' a, ,b ' }), ['a', 'b']);
    assert.equal(readEnv('AGENT_REFUND_LOOKUP_FAIL', { AGENT_REFUND_LOOKUP_FAIL: '1' }), true);
    assert.equal(readEnv('AGENT_REFUND_LOOKUP_FAIL', { AGENT_REFUND_LOOKUP_FAIL: 'yes' }), false);
    assert.equal(readEnv('AGENT_SEARCH_ATTRIBUTES', { AGENT_SEARCH_ATTRIBUTES: 'On' }), 'on');
    const url = 'postgres://ledger:pw@db:5432/agent_refunds';
    assert.equal(readEnv('AGENT_REFUNDS_DATABASE_URL', { AGENT_REFUNDS_DATABASE_URL: ` ${url} ` }), url);
    assert.equal(readEnv('AGENT_REFUNDS_DATABASE_URL', {}), undefined);
  });

  it('refuses a refunds or retail URL that is not a postgres:// URL with a database, without echoing it (it may hold a password)', () => {
    for (const name of ['AGENT_REFUNDS_DATABASE_URL', 'AGENT_RETAIL_DATABASE_URL'] as const)
      for (const value of ['mysql://u:secretpw@h/db', 'postgres://u:secretpw@h', 'u:secretpw@h/db'])
        assert.throws(
          () => readEnv(name, { [name]: value }),
          (err: Error) => err.message.startsWith(`${name} must be`) && !err.message.includes('secretpw'),
          `${name}=${value}`,
        );
  });

  it('refuses a malformed value in one line that names the variable', () => {
    for (const [name, value] of [
      ['OPENAI_TIMEOUT_SECONDS', '0'],
      ['AGENT_METRICS_PORT', '70000'],
      ['AGENT_SDK_METRICS_PORT', '0'],
      ['AGENT_CODEC_PORT', 'http'],
      ['AGENT_TOOL_PAUSE_MS', '-1'],
      ['AGENT_REFUND_PAUSE_AFTER_COMMIT_MS', 'soon'],
      ['AGENT_OFFLINE_MODEL_PORT', '-1'],
      ['TEMPORAL_HTTP_PORT', 'http'],
      ['TEMPORAL_METRICS_PORT', '65536'],
      ['TEMPORAL_PORT', '0'],
    ] as const)
      assert.throws(
        () => readEnv(name, { [name]: value }),
        (err: Error) => err.message.startsWith(`${name} must be`) && err.message.includes(`"${value}"`),
        name,
      );
  });

  it('a port variable takes any port number as it is, and refuses anything else in one line', () => {
    const ports = [
      'AGENT_OFFLINE_MODEL_PORT',
      'TEMPORAL_HTTP_PORT',
      'TEMPORAL_METRICS_PORT',
      'TEMPORAL_UI_PORT',
    ] as const;
    fc.assert(
      fc.property(fc.constantFrom(...ports), fc.integer({ min: 1, max: 65535 }), (name, port) => {
        assert.equal(readEnv(name, { [name]: ` ${port} ` }), port);
      }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...ports),
        fc.string({ maxLength: 40 }).filter((raw) => !/^\s*\d*\s*$/.test(raw) || Number(raw) > 65535),
        (name, raw) => {
          assert.throws(
            () => readEnv(name, { [name]: raw }),
            (err: Error) => err.message.startsWith(`${name} must be a port number`) && !err.message.includes('\n'),
          );
        },
      ),
      { numRuns: 500 },
    );
    // The dev server's settings read them: a bad one is the same line, naming its variable.
    assert.throws(
      () => localServerConfig({ TEMPORAL_UI_PORT: 'ui' }),
      /^Error: TEMPORAL_UI_PORT must be a port number/,
    );
    const cfg = localServerConfig({ TEMPORAL_PORT: '7400', TEMPORAL_HTTP_PORT: '7401', TEMPORAL_METRICS_PORT: '7402' });
    assert.deepEqual([cfg.port, cfg.uiPort, cfg.httpPort, cfg.metricsPort], [7400, 8400, 7401, 7402]);
  });

  it('masks the values of every secret in the table', () => {
    assert.deepEqual(SECRET_ENV_NAMES, [
      'OPENAI_API_KEY',
      'AGENT_REFUNDS_DATABASE_URL',
      'AGENT_MCP_RUN_SECRET',
      'AGENT_RETAIL_DATABASE_URL',
      'AGENT_CODEC_KEYS',
      'AGENT_CODEC_TOKEN',
    ]);
    for (const name of SECRET_ENV_NAMES) assert.ok(SECRET_ENV_VARS.includes(name));
  });
});
