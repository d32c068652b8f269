// `npm run bench [-- --quick] [flags]`: what durability costs per step, how far one worker scales,
// how fast a run recovers. Starts its own Temporal dev server (fresh SQLite file, free ports), a
// scripted OpenAI-compatible LLM server in this process, worker processes (bench/worker.ts:
// the shipped createAgentWorker) and a plain in-process loop (bench/baseline.ts), then
// prints one table and writes bench-results/bench.{json,md}. Progress goes to stderr.
// docs/benchmark.md explains the method, the tuning and the results. `--help` lists the flags.
// Each phase is a module of bench/phases/; this file parses the flags, runs them, prints the table.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { PREBUILT_BUNDLES, bundleStaleness } from '../worker/workflow-bundle';
import { startDevServer } from '../local-servers/dev-server';
import { startPostgresServer } from '../local-servers/postgres-server';
import type { TemporalServerHandle } from '../local-servers/server-handle';
import { findOrBuildTemporalCli } from '../local-servers/temporal-cli';
import { ScriptedLlmServer } from '../offline-model/scripted-llm-server';
import { measureCliColdStart } from './cli-start';
import type { Ctx } from './context';
import { parseBenchArgs } from './options';
import type { Options } from './options';
import { payloadSizes } from './payload-size';
import { phaseCancel } from './phases/cancel';
import { phaseCrash } from './phases/crash';
import { phaseHistory } from './phases/history';
import { phaseLimiter } from './phases/limiter';
import { phaseFloor } from './phases/floor';
import { phaseOverhead } from './phases/overhead';
import { phaseThroughput } from './phases/throughput';
import { execFileP, progress, t0 } from './process';
import { conditionsLine, HEADER, markdown, rows } from './report';
import type { Report } from './report';
import { scenarioScript } from './scenario';
import type { ScenarioOptions } from './scenario';
import { textTable } from './stats';
import { measureWorkerStart } from './worker-start';

type BenchServer = TemporalServerHandle & { stopAll?: () => Promise<void> };

const loadAvg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/** The Temporal server the options ask for: a dev server, or PostgreSQL and the multi-service server. */
async function startServer(opts: Options, logDir: string): Promise<{ server: BenchServer; version: string }> {
  const cliPath = await findOrBuildTemporalCli();
  const temporalVersion = (await execFileP(cliPath, ['--version'])).stdout.trim();
  const extraArgs = [
    ...opts.dynamicConfig.flatMap((kv) => ['--dynamic-config-value', kv]),
    ...opts.sqlitePragmas.flatMap((kv) => ['--sqlite-pragma', kv]),
    ...opts.serverArgs,
    '--headless',
  ];
  if (opts.server === 'postgres') {
    progress('starting PostgreSQL and the multi-service Temporal server (deploy/temporal/production.yaml)');
    // A folder of its own (the log folder is private to us; PostgreSQL runs as another user).
    const pg = await startPostgresServer({
      log: (line) => progress(line),
      deployDir: opts.deployDir,
      postgresSettings: opts.postgresSettings,
    });
    return { server: pg, version: `temporal server ${pg.version} on PostgreSQL` };
  }
  progress(`starting a dev server (${temporalVersion}) ${extraArgs.join(' ')}`);
  const server = await startDevServer({ cliPath, dbFile: path.join(logDir, 'temporal.sqlite'), extraArgs });
  return { server, version: temporalVersion };
}

function codecConverter(opts: Options): DataConverter | undefined {
  if (!opts.codec) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const dataConverter = (require(opts.codec) as { dataConverter?: DataConverter }).dataConverter;
  if (!dataConverter) throw new Error(`${opts.codec} exports no dataConverter`);
  return dataConverter;
}

/** Runs the phases --phases names, in their fixed order, into the report. */
async function runPhases(ctx: Ctx, connection: Connection, report: Report): Promise<void> {
  const { opts, server, llm } = ctx;
  if (opts.phases.includes('overhead')) report.overhead = await phaseOverhead(ctx);
  if (opts.phases.includes('floor')) report.floor = await phaseFloor(ctx);
  if (opts.phases.includes('throughput')) report.throughput = await phaseThroughput(ctx);
  if (opts.phases.includes('history')) {
    report.history = await phaseHistory(ctx);
    report.historyWithCodec = opts.codec
      ? 'this run used --codec: the rows above are with the codec'
      : 'n/a: no payload codec on this branch yet (security issue); rerun with --codec <module exporting dataConverter>';
  }
  if (opts.phases.includes('payload')) report.payload = payloadSizes();
  if (opts.phases.includes('cancel')) report.cancel = await phaseCancel(ctx);
  if (opts.phases.includes('crash')) report.crash = await phaseCrash(ctx);
  if (opts.phases.includes('limiter')) report.limiter = await phaseLimiter(ctx);
  if (opts.phases.includes('start')) {
    progress(`start: \`node dist/worker/main.js\` until it polls, ${opts.startTrials} processes`);
    report.workerStart = await measureWorkerStart({
      connection,
      namespace: server.namespace,
      runs: opts.startTrials,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: server.address,
        TEMPORAL_NAMESPACE: server.namespace,
        OPENAI_BASE_URL: llm.baseUrl,
        OPENAI_API_KEY: 'bench',
      },
    });
  }
  if (opts.phases.includes('cli')) {
    progress('cli: cold start of `agent list -o json`, 9 processes');
    const env = { ...process.env, TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace };
    report.cli = await measureCliColdStart({ runs: 9, env });
  }
}

/** The machine and software the numbers were taken on. */
function conditions(loadStart: string, serverVersion: string): Record<string, unknown> {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model?.trim() ?? 'unknown',
    memGiB: (os.totalmem() / 1024 ** 3).toFixed(1),
    commit: benchedCommit(),
    loadStart,
    loadEnd: loadAvg(),
    node: process.version,
    temporal: serverVersion,
    sdk: (
      JSON.parse(fs.readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string }
    ).version,
  };
}

/** The checkout's commit, so that a report (and bench-compare's rounds) says which code it measured. */
function benchedCommit(): string {
  try {
    const root = path.resolve(__dirname, '..', '..');
    const sha = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: root,
      encoding: 'utf8',
    });
    return dirty.trim() ? `${sha} with uncommitted changes` : sha;
  } catch {
    return 'unknown (no git)';
  }
}

/** bench.{json,md} (and bench-<label>.{json,md}), then the table on stdout. */
function writeReport(opts: Options, report: Report): void {
  const md = markdown(report);
  const json = JSON.stringify(report, (_k, v) => (v instanceof Map ? Object.fromEntries(v) : v), 2);
  const names = ['bench', ...(opts.label ? [`bench-${opts.label}`] : [])];
  for (const name of names) {
    fs.writeFileSync(path.join(opts.outDir, `${name}.json`), json + '\n');
    fs.writeFileSync(path.join(opts.outDir, `${name}.md`), md);
  }
  console.log(`\nConditions: ${conditionsLine(report)}\n`);
  console.log(textTable(HEADER, rows(report)));
  console.log(
    `\nwritten: ${names.map((n) => path.relative(process.cwd(), path.join(opts.outDir, `${n}.{json,md}`))).join(', ')}`,
  );
}

async function main(): Promise<void> {
  const opts = parseBenchArgs(process.argv.slice(2));
  setTimeout(() => {
    progress(`gave up after ${opts.timeoutMin} min (--timeout-min); killing the server and workers`);
    process.exit(2); // the exit hooks SIGKILL every child, the dev server included
  }, opts.timeoutMin * 60_000).unref();
  const startedAt = new Date().toISOString();
  fs.mkdirSync(opts.outDir, { recursive: true });
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-bench-'));
  const loadStart = loadAvg();
  progress(`mode ${opts.mode}, phases ${opts.phases.join(',')}; logs in ${logDir}; load avg ${loadStart}`);

  // Workers load the workflow bundle `npm run build` made; without it each would bundle at start.
  for (const bundle of PREBUILT_BUNDLES) {
    const stale = bundleStaleness(bundle);
    if (stale) throw new Error(`${path.relative(process.cwd(), bundle.file)} ${stale}: run \`npm run build\` first`);
  }

  const { server, version: serverVersion } = await startServer(opts, logDir);
  const scenarios = new Map<string, ScenarioOptions>();
  const llm = await ScriptedLlmServer.start({
    defaultScript: scenarioScript((workflowId) => scenarios.get(workflowId) ?? { steps: 1, delayMs: 0 }),
  });
  const dataConverter = codecConverter(opts);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace, ...(dataConverter ? { dataConverter } : {}) });
  const ctx: Ctx = { opts, server, llm, client, scenarios, logDir, workerCount: 0 };

  const report: Report = { label: opts.label, startedAt, durationS: 0, conditions: {}, options: opts };
  try {
    await runPhases(ctx, connection, report);
  } finally {
    await connection.close().catch(() => undefined);
    await llm.close();
    await (server.stopAll ?? server.stop)();
  }

  report.durationS = (Date.now() - t0) / 1000;
  report.conditions = conditions(loadStart, serverVersion);
  writeReport(opts, report);
  fs.rmSync(logDir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    // A bad flag is the user's mistake (one line, exit 2); anything else is ours (the stack).
    if (err instanceof Error && err.message.startsWith('bench: ')) {
      console.error(`${err.message} (npm run bench -- --help)`);
      process.exit(2);
    }
    progress(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
