// The deployment, checked without a Docker engine: docker-compose.yml must validate against the
// Compose Specification's JSON schema (vendored in test/fixtures/compose-spec), a deliberately
// broken copy must not, every image is pinned to an exact version, and the services the issue
// asks for are there and wired in the right order.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';
import { REPO_ROOT } from './helpers/harness';
import { parseYamlSubset, YamlSubsetError } from './helpers/yaml-subset';

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const COMPOSE_TEXT = read('docker-compose.yml');

function composeValidator(): ValidateFunction {
  const schema = JSON.parse(read('test/fixtures/compose-spec/compose-spec.json'));
  const ajv = new Ajv({ strict: false, allErrors: true });
  // The schema names its meta-schema by the https URL; Ajv ships draft-07 under the http one.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const draft07 = require('ajv/dist/refs/json-schema-draft-07.json');
  ajv.addMetaSchema({ ...draft07, $id: schema.$schema });
  return ajv.compile(schema);
}

const validate = composeValidator();

function errorsOf(text: string): string[] {
  const ok = validate(parseYamlSubset(text));
  return ok
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML, checked field by field
type Service = Record<string, any>;
const compose = parseYamlSubset(COMPOSE_TEXT) as { services: Record<string, Service>; [k: string]: unknown };

describe('docker-compose.yml', () => {
  it('validates against the Compose Specification schema', () => {
    assert.deepEqual(errorsOf(COMPOSE_TEXT), []);
  });

  it('a deliberately broken copy does not validate', () => {
    const unknownKey = COMPOSE_TEXT.replace(
      '    stop_grace_period: 60s\n',
      '    stop_grace_period: 60s\n    restart_policy: always\n',
    );
    assert.notEqual(unknownKey, COMPOSE_TEXT);
    assert.ok(
      errorsOf(unknownKey).some((e) => e.includes('restart_policy')),
      'an unknown service key is rejected',
    );

    const badCondition = COMPOSE_TEXT.replace(
      'condition: service_completed_successfully',
      'condition: service_finished',
    );
    assert.notEqual(badCondition, COMPOSE_TEXT);
    assert.ok(errorsOf(badCondition).length > 0, 'an unknown depends_on condition is rejected');

    const portsNotAList = COMPOSE_TEXT.replace(
      '    ports:\n      - "8080:8080"\n',
      '    ports:\n      published: 8080\n',
    );
    assert.notEqual(portsNotAList, COMPOSE_TEXT);
    assert.ok(
      errorsOf(portsNotAList).some((e) => e.includes('/services/temporal-ui/ports')),
      'ports must be a list',
    );
  });

  it('has PostgreSQL, schema setup, the Temporal server, the Web UI, search-attribute init and the worker, in order', () => {
    const s = compose.services;
    for (const name of ['postgresql', 'temporal-schema', 'temporal', 'temporal-init', 'temporal-ui', 'worker'])
      assert.ok(s[name], `service ${name}`);
    assert.match(s.postgresql!.image, /^postgres:/);
    assert.match(s['temporal-schema']!.image, /^temporalio\/admin-tools:/);
    assert.match(s.temporal!.image, /^temporalio\/server:/);
    assert.match(s['temporal-ui']!.image, /^temporalio\/ui:/);
    assert.equal(s['temporal-schema']!.depends_on.postgresql.condition, 'service_healthy');
    assert.equal(s.temporal!.depends_on['temporal-schema'].condition, 'service_completed_successfully');
    assert.equal(s['temporal-init']!.depends_on.temporal.condition, 'service_healthy');
    assert.equal(s.worker!.depends_on['temporal-init'].condition, 'service_completed_successfully');
    assert.equal(s.worker!.build.dockerfile, 'Dockerfile');
    assert.equal(s.worker!.environment.TEMPORAL_ADDRESS, 'temporal:7233');
    assert.equal(s.worker!.environment.AGENT_METRICS_PORT, '9464');
    // Scaling: no fixed host port on the worker, or a second replica could not start.
    assert.equal(s.worker!.ports, undefined);
    assert.equal(s.worker!.container_name, undefined);
  });

  it('pins every image to an exact version', () => {
    const images = Object.entries(compose.services).map(([name, svc]) => [name, String(svc.image)] as const);
    for (const [name, image] of images) {
      // major.minor.patch, or major.minor for PostgreSQL (whose releases are numbered that way).
      const exact = image.startsWith('postgres:')
        ? /^postgres:\d+\.\d+(-[a-z0-9.]+)?$/
        : /^[a-z0-9./-]+:v?\d+\.\d+\.\d+(-[a-z0-9.]+)?$/;
      assert.match(image, exact, `${name}: ${image} is not pinned to an exact version`);
      assert.doesNotMatch(image, /latest/);
    }
    const from = [...read('Dockerfile').matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]!);
    assert.ok(from.length >= 1);
    for (const image of from) assert.match(image, /^node:20\.\d+\.\d+-[a-z]+(-slim)?$/, `Dockerfile FROM ${image}`);
  });

  it('registers the search attributes from their table: the init script, run from the worker image', () => {
    const init = compose.services['temporal-init']!;
    assert.equal(init.image, compose.services.worker!.image);
    assert.deepEqual(init.command, ['node', 'dist/scripts/init-namespace.js']);
  });

  it('builds the worker with npm ci and the TypeScript build, and runs dist/worker/main.js', () => {
    const dockerfile = read('Dockerfile');
    assert.match(dockerfile, /RUN npm ci/);
    assert.match(dockerfile, /npm run build/);
    assert.match(dockerfile, /CMD \["node", "dist\/worker\/main\.js"\]/);
  });
});

describe('the YAML subset parser the compose test relies on', () => {
  it('reads mappings, sequences, flow sequences, quotes, comments and typed scalars', () => {
    const doc = parseYamlSubset(
      [
        'a: 1 # one',
        'b:',
        '  - x',
        '  - "y # not a comment"',
        '  - k: v',
        '    n: 2.5',
        'c: [\'s\', "t", 3]',
        'd:',
        '- true',
        '- ~',
        "e: 'it''s'",
        'f: {}',
        'g: ${VAR:-x}',
      ].join('\n'),
    );
    assert.deepEqual(doc, {
      a: 1,
      b: ['x', 'y # not a comment', { k: 'v', n: 2.5 }],
      c: ['s', 't', 3],
      d: [true, null],
      e: "it's",
      f: {},
      g: '${VAR:-x}',
    });
  });

  it('refuses what it does not understand instead of guessing', () => {
    for (const text of [
      'a: &x 1',
      'a: *x',
      'a: !!str 1',
      'a: |\n  text',
      'a: {b: 1}',
      'a: 1\na: 2',
      '---\na: 1',
      'a:\n\tb: 1',
      'a: b: c',
    ]) {
      assert.throws(() => parseYamlSubset(text), YamlSubsetError, JSON.stringify(text));
    }
  });
});
