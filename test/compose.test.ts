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
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT } from './helpers/harness';

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
  const ok = validate(parseYaml(text));
  return ok
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML, checked field by field
type Service = Record<string, any>;
const compose = parseYaml(COMPOSE_TEXT) as { services: Record<string, Service>; [k: string]: unknown };

describe('docker-compose.yml', () => {
  it('validates against the Compose Specification schema', () => {
    assert.deepEqual(errorsOf(COMPOSE_TEXT), []);
  });

  // [what is broken, text replaced, its replacement, a word the schema error names]
  const brokenCopies: Array<[string, string, string, string]> = [
    [
      'an unknown service key',
      '    stop_grace_period: 60s\n',
      '    stop_grace_period: 60s\n    restart_policy: always\n',
      'restart_policy',
    ],
    [
      'an unknown depends_on condition',
      'condition: service_completed_successfully',
      'condition: service_finished',
      'depends_on',
    ],
    ['ports that are not a list', "    ports:\n      - '8080:8080'\n", '    ports:\n      published: 8080\n', '/ports'],
  ];
  for (const [what, text, replacement, named] of brokenCopies) {
    it(`a copy with ${what} does not validate`, () => {
      const broken = COMPOSE_TEXT.replace(text, replacement);
      assert.notEqual(broken, COMPOSE_TEXT, 'the text to break is in docker-compose.yml');
      const errors = errorsOf(broken);
      assert.ok(
        errors.some((e) => e.includes(named)),
        `an error names ${named}: ${errors.join('; ')}`,
      );
    });
  }

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
    for (const image of from) assert.match(image, /^node:\d+\.\d+\.\d+-[a-z]+(-slim)?$/, `Dockerfile FROM ${image}`);
  });

  it('registers the search attributes from their table: the init script, run from the worker image', () => {
    const init = compose.services['temporal-init']!;
    assert.equal(init.image, compose.services.worker!.image);
    assert.deepEqual(init.command, ['node', 'dist/scripts/init-namespace.js']);
  });

  it('builds the worker with npm ci (whose prepare script is the build: TypeScript, then the workflow bundle), and runs dist/worker/main.js', () => {
    const dockerfile = read('Dockerfile');
    assert.match(dockerfile, /RUN npm ci/);
    assert.match(dockerfile, /COPY .*tsconfig\.json/);
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    assert.equal(scripts.prepare, 'npm run -s build');
    assert.equal(scripts.build, 'tsc -p . && node dist/scripts/bundle-workflows.js');
    assert.match(dockerfile, /CMD \["node", "dist\/worker\/main\.js"\]/);
  });
});
