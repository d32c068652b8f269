// `npm run eval`: runs the scenarios in eval/scenarios/ k times each against real workers and a
// real Temporal server, scores every run from its history, and writes eval-results/report.json and
// eval-results/report.html. Exit code 0 when the eval passes, 1 when it fails (or, with --compare,
// when something regressed), 2 on a usage error. `--suite tau2-retail` runs τ²-bench's retail tasks
// instead (eval/tau2/cli.ts).
import * as path from 'node:path';
import { CompareError, loadPreviousReport } from './harness/compare';
import { commaList, commonFlags, parseFlags, positiveInt, UsageError } from './harness/flags';
import type { CommonFlags } from './harness/flags';
import { loadScenarios, ScenarioError } from './scenario';
import type { Scenario } from './scenario';
import { buildReport, metricsTable, trialLine } from './report';
import type { Report } from './report';
import { reportHtml } from './report-html';
import { attachComparison, finishReport } from './harness/report-files';
import { runMetadata, SCENARIO_PROMPTS } from './harness/run-metadata';
import { runSuite } from './suite';
import type { SuiteResult } from './suite';
import type { TrialResult } from './run-one';
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

/** The scenario suite's own flags, besides the common ones (eval/harness/flags.ts). */
const SCENARIO_FLAGS = {
  k: { type: 'string' },
  scenarios: { type: 'string' },
  'chaos-once': { type: 'boolean' },
  live: { type: 'boolean' },
  dir: { type: 'string' },
} as const;

interface ScenarioRun extends CommonFlags {
  k: number;
  chaos: boolean;
  chaosOnce: boolean;
  live: boolean;
  scenarios: Scenario[];
}

/** The value of --suite, if given (each suite parses its own flags). */
function suiteOf(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--suite') return argv[i + 1] ?? '';
    if (argv[i]!.startsWith('--suite=')) return argv[i]!.slice('--suite='.length);
  }
  return undefined;
}

/** The run the flags ask for; offline, the scenarios that need a live model are left out. */
function scenarioRun(values: ReturnType<typeof parseFlags<typeof SCENARIO_FLAGS>>): ScenarioRun {
  const k = positiveInt('k', values.k, 3);
  const common = commonFlags(values, REPO_ROOT, 4);
  const chaosOnce = values['chaos-once'] === true;
  const dir = path.resolve(values.dir ?? path.join(REPO_ROOT, 'eval', 'scenarios'));
  let live = values.live === true;
  if (live && !process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL) {
    console.error('--live: neither OPENAI_API_KEY nor OPENAI_BASE_URL is set: running offline with the scripted model');
    live = false;
  }
  let scenarios = loadScenarios(dir, commaList(values.scenarios));
  if (!live) {
    const liveOnly = scenarios.filter((s) => s.model === 'live');
    if (liveOnly.length) console.error(`offline: skipping ${liveOnly.map((s) => s.name).join(', ')} (model: live)`);
    scenarios = scenarios.filter((s) => s.model !== 'live');
  }
  if (scenarios.length === 0) throw new UsageError(`no scenario to run in ${dir}`);
  return { ...common, k, chaos: values.chaos === true || chaosOnce, chaosOnce, live, scenarios };
}

/** A finished trial's progress line; a failed one says which checks failed. */
function trialProgress(phase: string, done: number, total: number, t: TrialResult): string {
  const line = trialLine(phase, done, total, {
    scenario: t.scenario,
    trial: t.trial,
    passed: t.verdict.passed,
    stop_reason: t.stopReason ?? null,
    steps: t.record.decisions.length,
  });
  if (t.verdict.passed) return line;
  const failed = t.verdict.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail ?? ''}`);
  return `${line} (${failed.join('; ')})`;
}

async function scenarioReport(run: ScenarioRun, suite: SuiteResult): Promise<Report> {
  const metadata = runMetadata({
    suite: 'scenarios',
    liveEnv: run.live ? process.env : undefined,
    prompts: SCENARIO_PROMPTS,
    seed: run.seed,
    server: suite.env,
    ownServer: !suite.serverKept,
    webUi: await webUiLinks(suite.env, suite.serverKept),
  });
  const { live, chaos, chaosOnce, k, seed, workers } = run;
  return buildReport(suite, { live, chaos, chaosOnce, k, seed, scenarios: run.scenarios.length, workers }, metadata);
}

/** The lines after the table: what broke, and which scenarios failed. */
function failureLines(report: Report): string[] {
  const lines = report.non_negotiables.problems.map((p) => `non-negotiable broken: ${p}`);
  const failed = report.trials.filter((t) => !t.passed);
  if (failed.length)
    lines.push(
      `${failed.length} of ${report.trials.length} trials failed: ${[...new Set(failed.map((t) => `${t.phase}/${t.scenario}`))].join(', ')}`,
    );
  return lines;
}

async function main(): Promise<number> {
  const named = suiteOf(process.argv.slice(2));
  if (named !== undefined) {
    if (named !== TAU2_SUITE) throw new UsageError(`--suite: unknown suite "${named}" (known: ${TAU2_SUITE})`);
    return tau2Main(process.argv.slice(2), REPO_ROOT);
  }
  const values = parseFlags(process.argv.slice(2), SCENARIO_FLAGS);
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const run = scenarioRun(values);
  // Read before the suite runs: a bad file is a usage error, not a failure after minutes of runs.
  const previous = run.compare !== undefined ? loadPreviousReport(run.compare, 'scenarios') : undefined;
  console.error(
    `eval: ${run.scenarios.length} scenarios × k=${run.k}, ${run.live ? 'live model' : 'scripted model'}${run.chaos ? `, then again under chaos (seed ${run.seed}${run.chaosOnce ? ', one cycle' : ''})` : ''}`,
  );
  const suite = await runSuite({
    scenarios: run.scenarios,
    k: run.k,
    chaos: run.chaos,
    chaosOnce: run.chaosOnce,
    seed: run.seed,
    live: run.live ? process.env : undefined,
    workers: run.workers,
    concurrency: run.concurrency,
    server: run.server,
    log: (line) => console.error(line),
    onTrial: (phase, done, total, t) => console.error(trialProgress(phase, done, total, t)),
  });
  const report = await scenarioReport(run, suite);
  if (previous) attachComparison(report, previous, run.compare!);
  return finishReport(run.out, report, { html: reportHtml, table: metricsTable, lines: failureLines(report) });
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
