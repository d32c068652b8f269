// `npm run eval`: runs the scenarios in eval/scenarios/ k times each against real workers and a
// real Temporal server, scores every run from its history, and writes eval-results/report.json and
// eval-results/report.html. Exit code 0 when the eval passes, 1 when it fails (or, with --compare,
// when something regressed), 2 on a usage error. `--suite tau2-retail` runs τ²-bench's retail tasks
// instead (eval/tau2/cli.ts).
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { temporalEnv } from '../runtime/temporal-env';
import { CompareError, loadPreviousReport } from './harness/compare';
import { loadScenarios, ScenarioError } from './scenario';
import { buildReport, metricsTable, trialLine } from './report';
import { reportHtml } from './report-html';
import {
  attachComparison,
  comparisonOutput,
  reportExitCode,
  verdictLine,
  writeReportFiles,
} from './harness/report-files';
import { runMetadata, SCENARIO_PROMPTS } from './harness/run-metadata';
import { runSuite } from './suite';
import { TAU2_SUITE, tau2Main } from './tau2/cli';
import { webUiLinks } from './harness/web-ui-links';

const REPO_ROOT = path.resolve(__dirname, '..', '..');

const USAGE = `usage: npm run eval -- [options]
  --suite ${TAU2_SUITE}  τ²-bench's retail tasks instead of the scenarios (npm run eval -- --suite ${TAU2_SUITE} --help)
  --k N              trials per scenario (default 3)
  --scenarios a,b    only these scenarios (names as in eval/scenarios/)
  --chaos            run the suite again while workers are killed and hung, the server restarts and runs are cancelled
  --chaos-once       with --chaos: one fault of each kind instead of faults until the suite ends
  --seed N           the chaos schedule's seed (default 1)
  --live             a real model (OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MODEL) instead of the scripted one
  --workers N        worker processes (default 2)
  --concurrency N    runs in flight at once (default 4)
  --server ADDRESS   use this Temporal server instead of starting one (no server restarts under chaos)
  --dir PATH         scenario folder (default eval/scenarios)
  --out PATH         report folder (default eval-results)
  --compare FILE     a previous report.json: list regressions and improvements; exit code 1 on a regression`;

class UsageError extends Error {}

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer, got "${raw}"`);
  return n;
}

/** The value of --suite, if given (each suite parses its own flags). */
function suiteOf(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--suite') return argv[i + 1] ?? '';
    if (argv[i]!.startsWith('--suite=')) return argv[i]!.slice('--suite='.length);
  }
  return undefined;
}

async function main(): Promise<number> {
  const named = suiteOf(process.argv.slice(2));
  if (named !== undefined) {
    if (named !== TAU2_SUITE) throw new UsageError(`--suite: unknown suite "${named}" (known: ${TAU2_SUITE})`);
    return tau2Main(process.argv.slice(2), REPO_ROOT);
  }
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        k: { type: 'string' },
        scenarios: { type: 'string' },
        chaos: { type: 'boolean' },
        'chaos-once': { type: 'boolean' },
        seed: { type: 'string' },
        live: { type: 'boolean' },
        workers: { type: 'string' },
        concurrency: { type: 'string' },
        server: { type: 'string' },
        dir: { type: 'string' },
        out: { type: 'string' },
        compare: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const k = positiveInt('k', values.k, 3);
  const seed = positiveInt('seed', values.seed, 1);
  const workers = positiveInt('workers', values.workers, 2);
  const concurrency = positiveInt('concurrency', values.concurrency, 4);
  const chaos = values.chaos === true || values['chaos-once'] === true;
  const dir = path.resolve(values.dir ?? path.join(REPO_ROOT, 'eval', 'scenarios'));
  const out = path.resolve(values.out ?? path.join(REPO_ROOT, 'eval-results'));
  const only = values.scenarios
    ? values.scenarios
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

  let live = values.live === true;
  if (live && !process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL) {
    console.error('--live: neither OPENAI_API_KEY nor OPENAI_BASE_URL is set: running offline with the scripted model');
    live = false;
  }
  let scenarios = loadScenarios(dir, only);
  if (!live) {
    const liveOnly = scenarios.filter((s) => s.model === 'live');
    if (liveOnly.length) console.error(`offline: skipping ${liveOnly.map((s) => s.name).join(', ')} (model: live)`);
    scenarios = scenarios.filter((s) => s.model !== 'live');
  }
  if (scenarios.length === 0) throw new UsageError(`no scenario to run in ${dir}`);
  // Read before the suite runs: a bad file is a usage error, not a failure after minutes of runs.
  const previous = values.compare !== undefined ? loadPreviousReport(values.compare, 'scenarios') : undefined;

  // --server: the connection settings as the CLI reads them (namespace, Web UI address), at that address.
  const server = values.server ? temporalEnv(process.env, { address: values.server }) : undefined;
  console.error(
    `eval: ${scenarios.length} scenarios × k=${k}, ${live ? 'live model' : 'scripted model'}${chaos ? `, then again under chaos (seed ${seed}${values['chaos-once'] ? ', one cycle' : ''})` : ''}`,
  );
  const suite = await runSuite({
    scenarios,
    k,
    chaos,
    chaosOnce: values['chaos-once'] === true,
    seed,
    live: live ? process.env : undefined,
    workers,
    concurrency,
    server,
    log: (line) => console.error(line),
    onTrial: (phase, done, total, t) =>
      console.error(
        trialLine(phase, done, total, {
          scenario: t.scenario,
          trial: t.trial,
          passed: t.verdict.passed,
          stop_reason: t.stopReason ?? null,
          steps: t.record.decisions.length,
        }) +
          (t.verdict.passed
            ? ''
            : ` (${t.verdict.checks
                .filter((c) => !c.ok)
                .map((c) => `${c.name}: ${c.detail ?? ''}`)
                .join('; ')})`),
      ),
  });
  const metadata = runMetadata({
    suite: 'scenarios',
    liveEnv: live ? process.env : undefined,
    prompts: SCENARIO_PROMPTS,
    seed,
    server: suite.env,
    ownServer: !suite.serverKept,
    webUi: await webUiLinks(suite.env, suite.serverKept),
  });
  const report = buildReport(
    suite,
    { live, chaos, chaosOnce: values['chaos-once'] === true, k, seed, scenarios: scenarios.length, workers },
    metadata,
  );
  if (previous) attachComparison(report, previous, values.compare!);
  writeReportFiles(out, report, reportHtml);
  console.log(metricsTable(report));
  for (const line of comparisonOutput(report)) console.log(line);
  for (const p of report.non_negotiables.problems) console.log(`non-negotiable broken: ${p}`);
  const failed = report.trials.filter((t) => !t.passed);
  if (failed.length)
    console.log(
      `${failed.length} of ${report.trials.length} trials failed: ${[...new Set(failed.map((t) => `${t.phase}/${t.scenario}`))].join(', ')}`,
    );
  console.log(verdictLine(report, out));
  return reportExitCode(report);
}

// Ctrl-C: exit normally, so the exit hooks stop the eval's workers and dev server.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof ScenarioError || err instanceof CompareError) {
      console.error(`eval: ${err.message}`);
      process.exit(2);
    }
    console.error(`eval: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
