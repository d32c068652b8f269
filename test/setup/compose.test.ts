// The deployment, checked without a Docker engine: docker-compose.yml loaded by the Compose
// Specification's own Go library (compose-go, the loader of `docker compose` itself) through
// deploy/compose-check, with an .env file as a user would write it: interpolation, the required
// OPENAI_API_KEY, the schema and consistency checks, and the project as the engine would receive it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import * as path from 'node:path';
import { findGo } from '../../local-servers/go-install';
import { composeServerVersion } from '../../local-servers/temporal-server-binaries';
import { readPostgresSettings } from '../../local-servers/postgres-settings';
import { temporalEnv } from '../../runtime/temporal-env';
import { DEFAULT_REFUNDS_DB } from '../../runtime/env-vars';
import { REPO_ROOT } from '../helpers/harness';

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const COMPOSE_TEXT = read('docker-compose.yml');

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the resolved project, checked field by field
type Service = Record<string, any>;
interface Project {
  services: Record<string, Service>;
  volumes?: Record<string, { name?: string }>;
  secrets?: Record<string, { file?: string }>;
}

let tmp: string;
let checker: string;

/** Builds deploy/compose-check once (the first time, `go` downloads compose-go through the module proxy). */
function buildChecker(): string {
  const go = findGo();
  assert.ok(go, 'Go is needed to validate docker-compose.yml with compose-go: install it (https://go.dev/dl)');
  const out = path.join(tmp, 'compose-check');
  const r = spawnSync(go, ['build', '-o', out, '.'], {
    cwd: path.join(REPO_ROOT, 'deploy', 'compose-check'),
    encoding: 'utf8',
    timeout: 600_000,
  });
  assert.equal(r.status, 0, `go build deploy/compose-check failed:\n${r.stderr}`);
  return out;
}

interface Loaded {
  ok: boolean;
  project?: Project;
  error: string;
}

/**
 * `docker compose config` with `envText` as the only .env and nothing from this process's
 * environment (which may hold a real OPENAI_API_KEY or TEMPORAL_ADDRESS).
 */
function load(envText: string, opts: { composeText?: string; profiles?: string[] } = {}): Loaded {
  const envFile = path.join(tmp, `env-${Math.random().toString(36).slice(2)}`);
  writeFileSync(envFile, envText);
  let file = path.join(REPO_ROOT, 'docker-compose.yml');
  if (opts.composeText !== undefined) {
    file = path.join(tmp, `compose-${Math.random().toString(36).slice(2)}.yml`);
    writeFileSync(file, opts.composeText);
  }
  const args = ['--env-file', envFile, '--project-directory', REPO_ROOT];
  for (const p of opts.profiles ?? []) args.push('--profile', p);
  const r = spawnSync(checker, [...args, file], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
  return r.status === 0
    ? { ok: true, project: JSON.parse(r.stdout) as Project, error: '' }
    : { ok: false, error: r.stderr.trim() };
}

function loadOk(envText: string, opts: { composeText?: string; profiles?: string[] } = {}): Project {
  const loaded = load(envText, opts);
  assert.ok(loaded.ok, `docker-compose.yml should load: ${loaded.error}`);
  return loaded.project!;
}

const KEY_ONLY = 'OPENAI_API_KEY=sk-test\n';

describe('docker-compose.yml, loaded by compose-go', () => {
  before(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'compose-check-'));
    checker = buildChecker();
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('validates, with every profile', () => {
    const project = loadOk(KEY_ONLY, { profiles: ['codec', 'metrics'] });
    for (const name of [
      'postgresql',
      'temporal-schema',
      'temporal',
      'temporal-init',
      'temporal-ui',
      'worker',
      'codec-server',
      'prometheus',
    ])
      assert.ok(project.services[name], `service ${name}`);
  });

  it('refuses to load without OPENAI_API_KEY, with a message that says what to set', () => {
    const loaded = load('');
    assert.equal(loaded.ok, false);
    assert.match(loaded.error, /required variable OPENAI_API_KEY is missing a value: set OPENAI_API_KEY in \.env/);
    assert.match(loaded.error, /keyless OPENAI_BASE_URL server/);
    // A keyless server: any value will do, and the base URL reaches the worker.
    const keyless = loadOk('OPENAI_API_KEY=unused\nOPENAI_BASE_URL=http://ollama:11434/v1\n');
    assert.equal(keyless.services.worker!.environment.OPENAI_BASE_URL, 'http://ollama:11434/v1');
  });

  // [what is broken, text replaced, its replacement, a word the error names]
  const brokenCopies: Array<[string, string, string, RegExp]> = [
    [
      'an unknown service key',
      '    stop_grace_period: 60s\n',
      '    stop_grace_period: 60s\n    restart_policy: always\n',
      /restart_policy/,
    ],
    [
      'an unknown depends_on condition',
      'condition: service_completed_successfully',
      'condition: service_finished',
      /depends_on|condition/,
    ],
    [
      'ports that are not a list',
      "    ports:\n      - '${AGENT_PUBLISH_IP:-127.0.0.1}:8080:8080'\n",
      '    ports:\n      published: 8080\n',
      /ports/,
    ],
    [
      'a secret that is not defined',
      '      - agent-codec-key-file\n    expose:',
      '      - codec-keys\n    expose:',
      /codec-keys/,
    ],
    [
      'a dependency on a missing service',
      '      temporal-init:\n        condition',
      '      temporal-setup:\n        condition',
      /temporal-setup/,
    ],
    [
      'an unterminated variable',
      'OPENAI_MODEL: ${OPENAI_MODEL:-gpt-4.1-mini}',
      'OPENAI_MODEL: ${OPENAI_MODEL',
      /OPENAI_MODEL|invalid/i,
    ],
  ];
  for (const [what, text, replacement, named] of brokenCopies) {
    it(`a copy with ${what} does not load`, () => {
      const broken = COMPOSE_TEXT.replace(text, replacement);
      assert.notEqual(broken, COMPOSE_TEXT, 'the text to break is in docker-compose.yml');
      const loaded = load(KEY_ONLY, { composeText: broken });
      assert.equal(loaded.ok, false, `${what} should not load`);
      assert.match(loaded.error, named);
    });
  }

  it('gives the worker the bundled server by default, with no TLS and empty secrets', () => {
    const project = loadOk(KEY_ONLY);
    const env = project.services.worker!.environment as Record<string, string>;
    assert.equal(env.TEMPORAL_ADDRESS, 'temporal:7233');
    assert.equal(env.TEMPORAL_NAMESPACE, 'default');
    assert.equal(env.OPENAI_API_KEY, 'sk-test');
    for (const name of [
      'TEMPORAL_API_KEY',
      'TEMPORAL_TLS',
      'TEMPORAL_TLS_CLIENT_CERT_PATH',
      'TEMPORAL_TLS_CLIENT_KEY_PATH',
      'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
      'AGENT_CODEC_KEY_FILE',
    ])
      assert.equal(env[name], '', `${name} is empty (read as unset)`);
    for (const [name, secret] of Object.entries(project.secrets ?? {}))
      assert.equal(secret.file, '/dev/null', `secret ${name}`);
    assert.equal(temporalEnv(env, {}, () => undefined).tls, undefined);
  });

  it('passes a Temporal Cloud .env to the worker and the init job: address, namespace, API key, TLS files and codec key file', () => {
    const files = {
      cert: path.join(tmp, 'client.pem'),
      key: path.join(tmp, 'client.key'),
      ca: path.join(tmp, 'ca.pem'),
      codec: path.join(tmp, 'codec-keys.json'),
    };
    for (const [what, file] of Object.entries(files)) writeFileSync(file, `${what} contents\n`);
    const project = loadOk(
      [
        KEY_ONLY.trim(),
        'TEMPORAL_ADDRESS=my-ns.a1b2c.tmprl.cloud:7233',
        'TEMPORAL_NAMESPACE=my-ns.a1b2c',
        'TEMPORAL_API_KEY=eyJ-test-key',
        'TEMPORAL_TLS_SERVER_NAME=my-ns.a1b2c.tmprl.cloud',
        `TEMPORAL_TLS_CLIENT_CERT_PATH=${files.cert}`,
        `TEMPORAL_TLS_CLIENT_KEY_PATH=${files.key}`,
        `TEMPORAL_TLS_SERVER_CA_CERT_PATH=${files.ca}`,
        `AGENT_CODEC_KEY_FILE=${files.codec}`,
        '',
      ].join('\n'),
    );
    const expectedFiles: Record<string, string> = {
      TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: files.key,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca,
      AGENT_CODEC_KEY_FILE: files.codec,
    };
    for (const service of ['worker', 'temporal-init']) {
      const svc = project.services[service]!;
      const env = svc.environment as Record<string, string>;
      assert.equal(env.TEMPORAL_ADDRESS, 'my-ns.a1b2c.tmprl.cloud:7233', service);
      assert.equal(env.TEMPORAL_NAMESPACE, 'my-ns.a1b2c', service);
      assert.equal(env.TEMPORAL_API_KEY, 'eyJ-test-key', service);
      assert.equal(env.TEMPORAL_TLS_SERVER_NAME, 'my-ns.a1b2c.tmprl.cloud', service);
      assert.ok(!Object.values(env).some((v) => v.includes('temporal:7233')), `${service}: no temporal:7233 left`);

      // Each file variable names an in-container path, mounted from the host file .env named.
      const mounts = new Map<string, string>(
        (svc.secrets as Array<{ source: string; target: string }>).map((s) => [
          s.target,
          project.secrets![s.source]!.file!,
        ]),
      );
      const inContainer: Record<string, string> = { ...env };
      for (const [name, hostFile] of Object.entries(expectedFiles)) {
        if (name === 'AGENT_CODEC_KEY_FILE' && service === 'temporal-init') continue; // it writes no payloads
        assert.match(env[name]!, /^\/run\/secrets\//, `${service}: ${name} is an in-container path`);
        assert.equal(mounts.get(env[name]!), hostFile, `${service}: ${name} is mounted from ${hostFile}`);
        inContainer[name] = mounts.get(env[name]!)!; // what the process would read at that path
      }
      // The worker's own reading of that environment: TLS with the client pair and CA, and the key.
      const read = temporalEnv(inContainer, {}, () => undefined);
      assert.equal(read.address, 'my-ns.a1b2c.tmprl.cloud:7233');
      assert.equal(read.apiKey, 'eyJ-test-key');
      assert.equal(read.tls?.clientCertPair?.crt.toString(), 'cert contents\n');
      assert.equal(read.tls?.serverRootCACertificate?.toString(), 'ca contents\n');
    }
  });

  it('loads deploy/cloud.env.example as the Cloud .env it documents: mTLS files mounted, no local server', () => {
    const project = loadOk(read('deploy/cloud.env.example'));
    const env = project.services.worker!.environment as Record<string, string>;
    assert.equal(env.TEMPORAL_ADDRESS, 'my-ns.a1b2c.tmprl.cloud:7233');
    assert.equal(env.TEMPORAL_NAMESPACE, 'my-ns.a1b2c');
    assert.equal(env.TEMPORAL_TLS_CLIENT_CERT_PATH, '/run/secrets/temporal-tls-client-cert');
    assert.equal(project.secrets!['temporal-tls-client-cert']!.file, path.join(REPO_ROOT, 'secrets', 'client.pem'));
    assert.equal(env.TEMPORAL_TLS_SERVER_CA_CERT_PATH, '', 'commented out: unset');
  });

  it('publishes every port on 127.0.0.1 unless AGENT_PUBLISH_IP says otherwise', () => {
    const ports = (project: Project) =>
      Object.entries(project.services).flatMap(([name, svc]) =>
        ((svc.ports ?? []) as Array<{ host_ip?: string; published: string }>).map((p) => [name, p] as const),
      );
    const local = ports(loadOk(KEY_ONLY, { profiles: ['codec', 'metrics'] }));
    assert.deepEqual(local.map(([name, p]) => `${name} ${p.published}`).sort(), [
      'codec-server 8888',
      'prometheus 9090',
      'temporal 7233',
      'temporal-ui 8080',
    ]);
    for (const [name, p] of local) assert.equal(p.host_ip, '127.0.0.1', `${name}:${p.published}`);
    const everywhere = ports(loadOk(`${KEY_ONLY}AGENT_PUBLISH_IP=0.0.0.0\n`, { profiles: ['codec', 'metrics'] }));
    for (const [name, p] of everywhere) assert.equal(p.host_ip, '0.0.0.0', `${name}:${p.published}`);
  });

  it('runs the Temporal server with deploy/temporal/production.yaml, fed only variables the template reads', () => {
    const temporal = loadOk(KEY_ONLY).services.temporal!;
    const template = read('deploy/temporal/production.yaml');
    const read_ = new Set([...template.matchAll(/env "([A-Z0-9_]+)"/g)].map((m) => m[1]!));
    for (const name of Object.keys(temporal.environment)) assert.ok(read_.has(name), `the template reads ${name}`);
    const script = (temporal.entrypoint as string[]).join(' ');
    assert.match(script, /TEMPORAL_BROADCAST_ADDRESS=\$\(hostname -i/);
    assert.match(script, /exec temporal-server --root \/ --config \/etc\/temporal\/agent-config --env production/);
    const binds = new Map(
      (temporal.volumes as Array<{ source: string; target: string }>).map((v) => [v.target, v.source]),
    );
    assert.equal(binds.get('/etc/temporal/agent-config'), path.join(REPO_ROOT, 'deploy', 'temporal'));
    const dynamic = temporal.environment.DYNAMIC_CONFIG_FILE_PATH as string;
    assert.equal(
      binds.get(path.dirname(dynamic)),
      path.join(REPO_ROOT, 'deploy', 'dynamicconfig'),
      'the dynamic config file is in a mounted folder',
    );
    assert.equal(temporal.environment.BIND_ON_IP, '0.0.0.0');
  });

  it("runs PostgreSQL with deploy/postgres/postgresql.conf's settings, the ones `npm run server -- --postgres` uses", () => {
    const settings = readPostgresSettings(path.join(REPO_ROOT, 'deploy', 'postgres', 'postgresql.conf'));
    assert.ok(settings.includes('max_connections=300'), settings.join(' '));
    const command = loadOk(KEY_ONLY).services.postgresql!.command as string[];
    assert.deepEqual(command, ['postgres', ...settings.flatMap((kv) => ['-c', kv])]);
  });

  it('checks health: the server by its port, the worker by /healthz on its metrics port', () => {
    const s = loadOk(KEY_ONLY).services;
    assert.ok(s.temporal!.healthcheck.test.join(' ').includes('7233'));
    const workerCheck = s.worker!.healthcheck.test.join(' ');
    assert.match(workerCheck, new RegExp(`127\\.0\\.0\\.1:${s.worker!.environment.AGENT_METRICS_PORT}/healthz`));
  });

  it('has the services wired in order, and a worker that scales', () => {
    const s = loadOk(KEY_ONLY).services;
    assert.equal(s['temporal-schema']!.depends_on.postgresql.condition, 'service_healthy');
    assert.equal(s.temporal!.depends_on['temporal-schema'].condition, 'service_completed_successfully');
    assert.equal(s['temporal-init']!.depends_on.temporal.condition, 'service_healthy');
    assert.equal(s.worker!.depends_on['temporal-init'].condition, 'service_completed_successfully');
    assert.equal(s.worker!.build.dockerfile, 'Dockerfile');
    assert.equal(s['temporal-init']!.image, s.worker!.image);
    assert.deepEqual(s['temporal-init']!.command, ['node', 'dist/scripts/init-namespace.js']);
    // Scaling: no fixed host port on the worker, or a second replica could not start.
    assert.equal(s.worker!.ports, undefined);
    assert.equal(s.worker!.container_name, undefined);
  });

  it('gives the refunds ledger one named volume, shared by every worker replica, at the folder the image lets the worker write', () => {
    const project = loadOk(KEY_ONLY);
    // AGENT_REFUNDS_DB's default, relative to the image's working directory.
    const workdir = /^WORKDIR\s+(\S+)$/m.exec(read('Dockerfile'))![1]!;
    const ledgerDir = path.posix.dirname(path.posix.join(workdir, DEFAULT_REFUNDS_DB));
    const mounts = (project.services.worker!.volumes ?? []) as Array<{ type: string; source: string; target: string }>;
    const ledger = mounts.find((m) => m.target === ledgerDir);
    assert.ok(ledger, `the worker mounts a volume at ${ledgerDir}`);
    assert.equal(
      ledger.type,
      'volume',
      'a named volume (one for all replicas, kept across restarts), not a bind mount',
    );
    assert.ok(project.volumes?.[ledger.source], `the volume ${ledger.source} is declared`);
    // A fresh named volume takes the image folder's owner: the Dockerfile gives it to the worker's user.
    const user = /^USER\s+(\S+)$/m.exec(read('Dockerfile'))![1]!;
    assert.match(
      read('Dockerfile'),
      new RegExp(`^RUN mkdir -p ${ledgerDir} && chown ${user}:${user} ${ledgerDir}$`, 'm'),
    );
  });

  it("keeps the refunds ledger and the retail store in the stack's PostgreSQL: their own database and user, made by the schema job, the worker pointed at it", () => {
    const s = loadOk(KEY_ONLY).services;
    const schema = s['temporal-schema']!.environment;
    const url = new URL(s.worker!.environment.AGENT_REFUNDS_DATABASE_URL!);
    assert.equal(url.protocol, 'postgres:');
    assert.equal(url.hostname, 'postgresql', 'the compose PostgreSQL service');
    assert.ok(s.postgresql, 'a service of that name');
    assert.equal(url.pathname, `/${schema.LEDGER_DB}`, 'the database deploy/setup-postgres.sh creates');
    assert.equal(decodeURIComponent(url.username), schema.LEDGER_USER);
    assert.equal(decodeURIComponent(url.password), schema.LEDGER_PASSWORD);
    assert.notEqual(schema.LEDGER_USER, schema.POSTGRES_USER, "not Temporal's own user");
    assert.notEqual(schema.LEDGER_DB, 'temporal');
    // The setup script reads those names, and its job has finished before any worker starts.
    const script = read('deploy/setup-postgres.sh');
    for (const name of ['LEDGER_DB', 'LEDGER_USER', 'LEDGER_PASSWORD']) assert.ok(script.includes(`"$${name}"`), name);
    assert.equal(s.temporal!.depends_on['temporal-schema'].condition, 'service_completed_successfully');
    // One password setting feeds both sides.
    const custom = loadOk(`${KEY_ONLY}POSTGRES_LEDGER_PASSWORD=s3cret\n`).services;
    assert.equal(custom['temporal-schema']!.environment.LEDGER_PASSWORD, 's3cret');
    assert.equal(new URL(custom.worker!.environment.AGENT_REFUNDS_DATABASE_URL!).password, 's3cret');
    // The retail store lives in the same database, under the same user.
    assert.equal(s.worker!.environment.AGENT_RETAIL_DATABASE_URL, s.worker!.environment.AGENT_REFUNDS_DATABASE_URL);
    assert.equal(
      custom.worker!.environment.AGENT_RETAIL_DATABASE_URL,
      custom.worker!.environment.AGENT_REFUNDS_DATABASE_URL,
    );
  });

  it('pins every image to an exact version; server and admin-tools on the tag the PostgreSQL tests build', () => {
    const services = loadOk(KEY_ONLY, { profiles: ['codec', 'metrics'] }).services;
    for (const [name, svc] of Object.entries(services)) {
      const image = String(svc.image);
      // major.minor.patch, or major.minor for PostgreSQL (whose releases are numbered that way).
      const exact = image.startsWith('postgres:')
        ? /^postgres:\d+\.\d+(-[a-z0-9.]+)?$/
        : /^[a-z0-9./-]+:v?\d+\.\d+\.\d+(-[a-z0-9.-]+)?$/;
      assert.match(image, exact, `${name}: ${image} is not pinned to an exact version`);
    }
    const tag = (image: string) => image.split(':')[1];
    // admin-tools is published as <server>-tctl-<tctl>-cli-<cli> (1.29.1-tctl-1.18.4-cli-1.5.0):
    // the same server version, named first.
    const server = tag(services.temporal!.image)!;
    assert.match(
      tag(services['temporal-schema']!.image)!,
      new RegExp(`^${server.replace(/\./g, '\\.')}-tctl-\\d+\\.\\d+\\.\\d+-cli-\\d+\\.\\d+\\.\\d+$`),
    );
    assert.equal(tag(services.temporal!.image), composeServerVersion());
    const from = [...read('Dockerfile').matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]!);
    assert.ok(from.length >= 1);
    for (const image of from) assert.match(image, /^node:24\.\d+\.\d+-[a-z]+(-slim)?( |$)/, `Dockerfile FROM ${image}`);
  });
});
