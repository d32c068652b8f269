// Jaeger all-in-one (the Jaeger v2 binary, `github.com/jaegertracing/jaeger/cmd/jaeger`), for reading
// the runtime's OpenTelemetry traces back: it accepts OTLP over HTTP and serves the query API
// (/api/traces) and its UI, with in-memory storage. Built from Go source like the Temporal server:
// `go install` refuses the module (its go.mod has a replace directive), so the module is downloaded
// and built in its own folder. The build takes ~15 minutes cold on 2 cores; `.ci/run` starts it in
// the background right after `npm run build` (`node dist/local-servers/jaeger.js`), and a test waits for it.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processLog } from '../runtime/process-log';
import { findGo, isExecutableFile } from './go-install';
import type { Log } from './go-install';
import { freePort } from './free-port';
import { spawnLogged, terminate, waitReady } from './child-processes';

export const JAEGER_VERSION = 'v1.75.0';
const JAEGER_MODULE = 'github.com/jaegertracing/jaeger';

export interface JaegerServer {
  /** Where spans are POSTed: set OTEL_EXPORTER_OTLP_ENDPOINT to this (the exporter adds /v1/traces). */
  otlpEndpoint: string;
  /** The query API and UI: `${queryUrl}/api/traces?service=...`, `${queryUrl}/trace/<id>`. */
  queryUrl: string;
  logFile: string;
  stop(): Promise<void>;
}

/** ~/.cache/durable-react-agent/jaeger-v1.75.0/jaeger: built once, outside the repository. */
export function jaegerCachePath(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'durable-react-agent', `jaeger-${JAEGER_VERSION}`, 'jaeger');
}

/** JAEGER_PATH, else the cache, else a build from source (minutes; progress on `log`). */
export async function findOrBuildJaeger(log: Log = processLog('jaeger').info): Promise<string> {
  const given = process.env.JAEGER_PATH;
  if (given) {
    if (!isExecutableFile(path.resolve(given))) throw new Error(`JAEGER_PATH=${given} is not an executable file`);
    return path.resolve(given);
  }
  const bin = jaegerCachePath();
  if (isExecutableFile(bin)) return bin;
  const go = findGo();
  if (!go) throw new Error(`Jaeger ${JAEGER_VERSION} is not built (${bin}) and Go is not installed to build it`);
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  // Says a build is under way (its pid), so a test waits for it rather than starting a second one.
  fs.writeFileSync(buildingMarker(), String(process.pid));
  try {
    return await buildJaeger(go, bin, log);
  } finally {
    fs.rmSync(buildingMarker(), { force: true });
  }
}

function buildingMarker(): string {
  return path.join(path.dirname(jaegerCachePath()), 'building');
}

/** The pid in the marker of a build that is still running, else undefined. */
function buildUnderWay(): number | undefined {
  try {
    const pid = Number(fs.readFileSync(buildingMarker(), 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
    process.kill(pid, 0); // throws when no such process
    return pid;
  } catch {
    return undefined;
  }
}

async function buildJaeger(go: string, bin: string, log: Log): Promise<string> {
  log(`jaeger: downloading ${JAEGER_MODULE}@${JAEGER_VERSION} with ${go}`);
  const download = spawnSync(go, ['mod', 'download', '-json', `${JAEGER_MODULE}@${JAEGER_VERSION}`], {
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  if (download.status !== 0) throw new Error(`go mod download ${JAEGER_MODULE}: ${download.stderr.trim().slice(-500)}`);
  const dir = (JSON.parse(download.stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${JAEGER_MODULE}: no module folder in its answer`);
  log(`jaeger: building ./cmd/jaeger in ${dir} (about 15 minutes on 2 cores the first time)`);
  const tmp = `${bin}.${process.pid}.tmp`;
  const started = Date.now();
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(go, ['build', '-o', tmp, './cmd/jaeger'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
      // The module cache is read-only: go.sum updates go nowhere (-mod=mod would write there).
      env: { ...process.env, CGO_ENABLED: process.env.CGO_ENABLED ?? '0', GOFLAGS: '-mod=readonly' },
    });
    let tail = '';
    child.stderr.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString('utf8')).slice(-2000)));
    child.on('exit', (status) => {
      if (status !== 0) log(`jaeger: go build failed: ${tail.trim()}`);
      resolve(status);
    });
  });
  if (code !== 0) throw new Error(`building Jaeger ${JAEGER_VERSION} failed (go build exit ${code})`);
  fs.renameSync(tmp, bin); // a concurrent reader sees no binary or a whole one
  log(`jaeger: built ${bin} in ${Math.round((Date.now() - started) / 1000)} s`);
  return bin;
}

/** Waits up to `timeoutMs` for the binary a background build (.ci/run) is making; builds it if no build runs. */
export async function waitForJaeger(timeoutMs: number, log?: Log): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (!process.env.JAEGER_PATH && !isExecutableFile(jaegerCachePath()) && buildUnderWay()) {
    if (Date.now() > deadline) throw new Error(`Jaeger's background build did not finish in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  return findOrBuildJaeger(log);
}

/** Jaeger on free loopback ports, in-memory storage, OTLP over HTTP in; stopped by stop(). */
export async function startJaeger(opts: { logDir: string; binary?: string }): Promise<JaegerServer> {
  const binary = opts.binary ?? (await findOrBuildJaeger());
  const [otlp, query, queryGrpc, health] = await freePorts(4);
  const config = path.join(opts.logDir, 'jaeger.yaml');
  fs.writeFileSync(config, jaegerConfig({ otlp, query, queryGrpc, health }));
  const logFile = path.join(opts.logDir, 'jaeger.log');
  const proc = spawnLogged(binary, [`--config=file:${config}`], logFile);
  const queryUrl = `http://127.0.0.1:${query}`;
  const ready = (): Promise<boolean> =>
    fetch(`${queryUrl}/api/services`).then(
      (r) => r.ok,
      () => false,
    );
  await waitReady(proc, `Jaeger ${JAEGER_VERSION} at ${queryUrl}`, ready, logFile, 60_000);
  return {
    otlpEndpoint: `http://127.0.0.1:${otlp}`,
    queryUrl,
    logFile,
    stop: () => terminate(proc, 'SIGTERM'),
  };
}

async function freePorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) ports.push(await freePort(ports));
  return ports;
}

/** The all-in-one configuration of the Jaeger module (its all-in-one.yaml), reduced to OTLP HTTP and the query API on the given ports. */
function jaegerConfig(p: { otlp: number; query: number; queryGrpc: number; health: number }): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${p.query}
    grpc:
      endpoint: 127.0.0.1:${p.queryGrpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${p.health}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${p.otlp}
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

// `node dist/local-servers/jaeger.js` builds Jaeger if it is not built (.ci/run, in the background) and prints its path.
if (require.main === module) {
  findOrBuildJaeger().then(
    (bin) => console.log(bin),
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
