// `npm run eval -- --suite tau2-retail [flags]`: τ²-bench's retail tasks through the real runtime,
// scored by τ²'s end-state hash. Writes report.json and report.html; exit code 0 when the suite
// passes, 1 when it fails (or, with --compare, when something regressed), 2 on a usage error, a bad
// task file or a previous report that cannot be compared.
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { temporalEnv } from '../../runtime/temporal-env';
import { CompareError, loadPreviousReport } from '../harness/compare';
import {
  attachComparison,
  comparisonOutput,
  reportExitCode,
  verdictLine,
  writeReportFiles,
} from '../harness/report-files';
import { RETAIL_CONVERSATION_PROMPTS, runMetadata } from '../harness/run-metadata';
import { webUiLinks } from '../harness/web-ui-links';
import { buildTau2Report, tau2Table, tau2TrialLine } from './report';
import { tau2ReportHtml } from './report-html';
import type { SuiteMode } from './run-task';
import { runTau2Suite } from './suite';
import { loadTasks, TaskFileError } from './task';

export const TAU2_SUITE = 'tau2-retail';

const USAGE = `usage: npm run eval -- --suite ${TAU2_SUITE} [options]
  --tasks FILE         a τ²-format tasks JSON (default: domains/retail/data/tasks-train.json)
  --task-ids a,b,c     only these tasks (ids as in the file)
  --mode replay|live|live-scripted
                       replay (default): a scripted agent performs each task's ground-truth actions and a
                       scripted customer says yes; live: the model (OPENAI_API_KEY / OPENAI_BASE_URL /
                       OPENAI_MODEL) is the agent and an LLM customer follows the task's instructions;
                       live-scripted: the live path against the suite's own scripted server, which plays
                       the ground truth in tool calls and τ²'s user simulator, and checks that every
                       identifier shown to the model is in the request that needs it (no model is scored)
  --trials K           trials per task (default 1); pass^k for k = 1..K
  --chaos              run the tasks again while workers are killed and hung and the server restarts
  --dump-state DIR     write DIR/<task id>.json: the task's retail database at the end, in τ²'s JSON shape
  --seed N             the chaos schedule's seed (default 1)
  --workers N          worker processes (default 2)
  --concurrency N      tasks in flight at once (default 8)
  --server ADDRESS     use this Temporal server instead of starting one (no server restarts under chaos)
  --out PATH           report folder (default eval-results)
  --compare FILE       a previous report.json of this suite: list regressions and improvements; exit code 1 on a regression`;

const MODE_LINES: Record<SuiteMode, string> = {
  replay: 'replay of the ground truth',
  live: 'live model and LLM customer',
  'live-scripted': 'live path, scripted ground truth and user simulator (no model scored)',
};

class Tau2UsageError extends Error {}

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Tau2UsageError(`--${name} must be a positive integer, got "${raw}"`);
  return n;
}

function modeOf(raw: string | undefined): SuiteMode {
  if (raw === undefined || raw === 'replay') return 'replay';
  if (raw === 'live' || raw === 'live-scripted') return raw;
  throw new Tau2UsageError(`--mode must be replay, live or live-scripted, got "${raw}"`);
}

/** Runs the suite for these command-line arguments; returns the exit code. */
export async function tau2Main(argv: string[], repoRoot: string): Promise<number> {
  try {
    return await run(argv, repoRoot);
  } catch (err) {
    if (err instanceof Tau2UsageError || err instanceof TaskFileError || err instanceof CompareError) {
      console.error(`eval: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

async function run(argv: string[], repoRoot: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        suite: { type: 'string' },
        tasks: { type: 'string' },
        'task-ids': { type: 'string' },
        mode: { type: 'string' },
        trials: { type: 'string' },
        chaos: { type: 'boolean' },
        'dump-state': { type: 'string' },
        seed: { type: 'string' },
        workers: { type: 'string' },
        concurrency: { type: 'string' },
        server: { type: 'string' },
        out: { type: 'string' },
        compare: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new Tau2UsageError((err as Error).message);
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const mode = modeOf(values.mode);
  const trials = positiveInt('trials', values.trials, 1);
  const seed = positiveInt('seed', values.seed, 1);
  const workers = positiveInt('workers', values.workers, 2);
  const concurrency = positiveInt('concurrency', values.concurrency, 8);
  const chaos = values.chaos === true;
  const tasksFile = path.resolve(values.tasks ?? path.join(repoRoot, 'domains', 'retail', 'data', 'tasks-train.json'));
  const out = path.resolve(values.out ?? path.join(repoRoot, 'eval-results'));
  const dumpDir = values['dump-state'] !== undefined ? path.resolve(values['dump-state']) : undefined;
  const only = (values['task-ids'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (values['task-ids'] !== undefined && only.length === 0) throw new Tau2UsageError('--task-ids names no task');
  if (mode === 'live' && !process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL)
    throw new Tau2UsageError('--mode live needs OPENAI_API_KEY (or OPENAI_BASE_URL for a keyless server)');
  const tasks = loadTasks(tasksFile, only);
  // Read before the suite runs: a bad file is a usage error, not a failure after minutes of runs.
  const previous = values.compare !== undefined ? loadPreviousReport(values.compare, TAU2_SUITE) : undefined;

  const server = values.server ? temporalEnv(process.env, { address: values.server }) : undefined;
  console.error(
    `eval ${TAU2_SUITE}: ${tasks.length} tasks × ${trials} trials, ${MODE_LINES[mode]}${chaos ? `, then again under chaos (seed ${seed})` : ''}`,
  );
  const suite = await runTau2Suite({
    tasks,
    mode,
    trials,
    chaos,
    seed,
    ...(mode === 'live' ? { live: process.env } : {}),
    workers,
    concurrency,
    ...(dumpDir ? { dumpDir } : {}),
    ...(server ? { server } : {}),
    log: (line) => console.error(line),
    onTrial: (phase, done, total, t) => console.error(tau2TrialLine(phase, done, total, t)),
  });
  const metadata = runMetadata({
    suite: TAU2_SUITE,
    liveEnv: mode === 'live' ? process.env : undefined,
    prompts: RETAIL_CONVERSATION_PROMPTS,
    seed,
    server: suite.env,
    ownServer: !suite.serverKept,
    webUi: await webUiLinks(suite.env, suite.serverKept),
  });
  const report = buildTau2Report(
    suite,
    {
      mode,
      chaos,
      trials,
      seed,
      tasksFile: path.relative(process.cwd(), tasksFile) || tasksFile,
      tasks: tasks.length,
      workers,
    },
    metadata,
  );
  if (previous) attachComparison(report, previous, values.compare!);
  writeReportFiles(out, report, tau2ReportHtml);
  console.log(tau2Table(report));
  for (const line of comparisonOutput(report)) console.log(line);
  for (const [phase, p] of Object.entries(report.phases))
    console.log(`${phase}: ${p.tasks} tasks × ${trials} trials in ${(p.wall_ms / 1000).toFixed(1)} s`);
  for (const problem of report.problems) console.log(`problem: ${problem}`);
  if (dumpDir) console.log(`end states in ${path.relative(process.cwd(), dumpDir) || '.'}/<task id>.json`);
  console.log(verdictLine(report, out));
  return reportExitCode(report);
}
