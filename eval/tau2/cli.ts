// `npm run eval -- --suite tau2-retail [flags]`: τ²-bench's retail tasks through the real runtime,
// scored by τ²'s end-state hash. Writes report.json and report.html; exit code 0 when the suite
// passes, 1 when it fails (or, with --compare, when something regressed), 2 on a usage error, a bad
// task file or a previous report that cannot be compared.
import * as path from 'node:path';
import { CompareError, loadPreviousReport } from '../harness/compare';
import { commaList, commonFlags, parseFlags, positiveInt, UsageError } from '../harness/flags';
import type { CommonFlags } from '../harness/flags';
import { attachComparison, finishReport } from '../harness/report-files';
import { RETAIL_CONVERSATION_PROMPTS, runMetadata } from '../harness/run-metadata';
import { webUiLinks } from '../harness/web-ui-links';
import { buildTau2Report, tau2Table, tau2TrialLine } from './report';
import type { Tau2Report } from './report';
import { tau2ReportHtml } from './report-html';
import type { SuiteMode } from './run-task';
import { runTau2Suite } from './suite';
import type { Tau2SuiteResult } from './suite';
import { loadTasks, TaskFileError } from './task';
import type { Tau2Task } from './task';

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

function modeOf(raw: string | undefined): SuiteMode {
  if (raw === undefined || raw === 'replay') return 'replay';
  if (raw === 'live' || raw === 'live-scripted') return raw;
  throw new UsageError(`--mode must be replay, live or live-scripted, got "${raw}"`);
}

/** Runs the suite for these command-line arguments; returns the exit code. */
export async function tau2Main(argv: string[], repoRoot: string): Promise<number> {
  try {
    return await runFromFlags(argv, repoRoot);
  } catch (err) {
    if (err instanceof UsageError || err instanceof TaskFileError || err instanceof CompareError) {
      console.error(`eval: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

/** The τ² suite's own flags, besides the common ones (eval/harness/flags.ts). */
const TAU2_FLAGS = {
  tasks: { type: 'string' },
  'task-ids': { type: 'string' },
  mode: { type: 'string' },
  trials: { type: 'string' },
  'dump-state': { type: 'string' },
} as const;

interface Tau2Run extends CommonFlags {
  mode: SuiteMode;
  trials: number;
  chaos: boolean;
  tasksFile: string;
  dumpDir: string | undefined;
  tasks: Tau2Task[];
}

function tau2Run(values: ReturnType<typeof parseFlags<typeof TAU2_FLAGS>>, repoRoot: string): Tau2Run {
  const mode = modeOf(values.mode);
  const trials = positiveInt('trials', values.trials, 1);
  const common = commonFlags(values, repoRoot, 8);
  const tasksFile = path.resolve(values.tasks ?? path.join(repoRoot, 'domains', 'retail', 'data', 'tasks-train.json'));
  const dumpDir = values['dump-state'] !== undefined ? path.resolve(values['dump-state']) : undefined;
  const only = commaList(values['task-ids']);
  if (values['task-ids'] !== undefined && only.length === 0) throw new UsageError('--task-ids names no task');
  if (mode === 'live' && !process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL)
    throw new UsageError('--mode live needs OPENAI_API_KEY (or OPENAI_BASE_URL for a keyless server)');
  const tasks = loadTasks(tasksFile, only);
  return { ...common, mode, trials, chaos: values.chaos === true, tasksFile, dumpDir, tasks };
}

async function tau2Report(run: Tau2Run, suite: Tau2SuiteResult): Promise<Tau2Report> {
  const metadata = runMetadata({
    suite: TAU2_SUITE,
    liveEnv: run.mode === 'live' ? process.env : undefined,
    prompts: RETAIL_CONVERSATION_PROMPTS,
    seed: run.seed,
    server: suite.env,
    ownServer: !suite.serverKept,
    webUi: await webUiLinks(suite.env, suite.serverKept),
  });
  const { mode, chaos, trials, seed, workers } = run;
  const tasksFile = path.relative(process.cwd(), run.tasksFile) || run.tasksFile;
  return buildTau2Report(suite, { mode, chaos, trials, seed, tasksFile, tasks: run.tasks.length, workers }, metadata);
}

/** The lines after the table: each phase's wall time, the problems, where the end states went. */
function tau2Lines(run: Tau2Run, report: Tau2Report): string[] {
  return [
    ...Object.entries(report.phases).map(
      ([phase, p]) => `${phase}: ${p.tasks} tasks × ${run.trials} trials in ${(p.wall_ms / 1000).toFixed(1)} s`,
    ),
    ...report.problems.map((problem) => `problem: ${problem}`),
    ...(run.dumpDir ? [`end states in ${path.relative(process.cwd(), run.dumpDir) || '.'}/<task id>.json`] : []),
  ];
}

async function runFromFlags(argv: string[], repoRoot: string): Promise<number> {
  const values = parseFlags(argv, TAU2_FLAGS);
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const run = tau2Run(values, repoRoot);
  // Read before the suite runs: a bad file is a usage error, not a failure after minutes of runs.
  const previous = run.compare !== undefined ? loadPreviousReport(run.compare, TAU2_SUITE) : undefined;
  console.error(
    `eval ${TAU2_SUITE}: ${run.tasks.length} tasks × ${run.trials} trials, ${MODE_LINES[run.mode]}${run.chaos ? `, then again under chaos (seed ${run.seed})` : ''}`,
  );
  const suite = await runTau2Suite({
    tasks: run.tasks,
    mode: run.mode,
    trials: run.trials,
    chaos: run.chaos,
    seed: run.seed,
    ...(run.mode === 'live' ? { live: process.env } : {}),
    workers: run.workers,
    concurrency: run.concurrency,
    ...(run.dumpDir ? { dumpDir: run.dumpDir } : {}),
    ...(run.server ? { server: run.server } : {}),
    log: (line) => console.error(line),
    onTrial: (phase, done, total, t) => console.error(tau2TrialLine(phase, done, total, t)),
  });
  const report = await tau2Report(run, suite);
  if (previous) attachComparison(report, previous, run.compare!);
  return finishReport(run.out, report, { html: tau2ReportHtml, table: tau2Table, lines: tau2Lines(run, report) });
}
