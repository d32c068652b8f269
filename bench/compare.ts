// `npm run bench-compare -- <commit> [--rounds N] [--phases ...] [-- <more bench flags>]`: this
// checkout's benchmark side by side with another commit's, on the same machine, in alternating rounds.
// The other commit is checked out in a git worktree of its own (in the temp folder, kept for the
// next comparison) with this checkout's node_modules, and built by its own `npm run bench`; each
// round runs both benches with `--quick` (the order alternates, so neither always runs on a warmer or
// a more loaded machine), then the table gives each figure's median over the rounds and the ratio
// this/other. Written to bench-results/compare-<commit>.md too. docs/benchmark.md says how to read it.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../local-servers/repo-root';
import type { Report } from './report';
import { markdownTable, median, textTable } from './stats';

const USAGE = `usage: npm run bench-compare -- <commit> [--rounds N] [--phases LIST] [-- <more bench flags>]
  <commit>       what to compare this checkout with (a hash, a tag, HEAD~3, ...)
  --rounds N     rounds of both benches (default 2); each bench runs with --quick
  --phases LIST  the bench's phases (default overhead,throughput,start,cli)`;

const DEFAULT_PHASES = 'overhead,throughput,start,cli';

interface CompareOptions {
  commit: string;
  rounds: number;
  phases: string;
  benchArgs: string[];
}

export function parseCompareArgs(argv: string[]): CompareOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { rounds: { type: 'string', default: '2' }, phases: { type: 'string', default: DEFAULT_PHASES } },
    allowPositionals: true,
  });
  const split = argv.indexOf('--');
  const benchArgs = split >= 0 ? argv.slice(split + 1) : [];
  const own = split >= 0 ? positionals.slice(0, positionals.length - benchArgs.length) : positionals;
  if (own.length !== 1 || !/^[1-9]\d*$/.test(values.rounds)) throw new Error(USAGE);
  return { commit: own[0]!, rounds: Number(values.rounds), phases: values.phases, benchArgs };
}

/** The figures a comparison reads from one bench report: name → value (ms, runs/s, MiB). */
export function figuresOf(report: Report): Map<string, number> {
  const out = new Map<string, number>();
  for (const o of report.overhead ?? []) {
    out.set(`overhead/step @${o.latencyMs} ms LLM (ms)`, o.overheadPerStepMs.median);
    out.set(`worker CPU/step @${o.latencyMs} ms LLM (ms)`, o.cpuPerStepMs.worker);
    out.set(`server CPU/step @${o.latencyMs} ms LLM (ms)`, o.cpuPerStepMs.server);
  }
  const concurrencies = [...new Set((report.throughput ?? []).map((t) => t.concurrency))];
  for (const c of concurrencies) {
    const trials = (report.throughput ?? []).filter((t) => t.concurrency === c);
    out.set(`throughput C=${c} (runs/s)`, median(trials.map((t) => t.runsPerSec)));
    out.set(`throughput C=${c} (steps/s)`, median(trials.map((t) => t.stepsPerSec)));
    out.set(`worker CPU/step C=${c} (ms)`, median(trials.map((t) => t.cpuPerStepMs.worker)));
    out.set(`server CPU/step C=${c} (ms)`, median(trials.map((t) => t.cpuPerStepMs.server)));
  }
  if (report.workerStart) {
    out.set('worker cold start, spawn to first poll (ms)', report.workerStart.medianMs);
    out.set('worker CPU by its first poll (ms)', report.workerStart.cpuMs.median);
  }
  if (report.cli) out.set(`CLI cold start, agent ${report.cli.args.join(' ')} (ms)`, report.cli.medianMs);
  const { cancel } = report;
  if (cancel) {
    out.set('cancel → LLM request aborted, client API (ms)', cancel.api.abortMs.median);
    out.set('cancel → run closed, client API (ms)', cancel.api.closedMs.median);
    if (cancel.cli) {
      if (cancel.cli.requestedMs)
        out.set('cancel → recorded by the server, `agent cancel` (ms)', cancel.cli.requestedMs.median);
      out.set('cancel → LLM request aborted, `agent cancel` (ms)', cancel.cli.abortMs.median);
      out.set('cancel → run closed, `agent cancel` (ms)', cancel.cli.closedMs.median);
    }
  }
  return out;
}

/** The table: each figure's median over the rounds on both sides, and this/other. */
export function comparisonRows(other: Report[], mine: Report[]): string[][] {
  const perSide = (reports: Report[]) => reports.map(figuresOf);
  const [theirs, ours] = [perSide(other), perSide(mine)];
  const names = [...new Set([...theirs, ...ours].flatMap((f) => [...f.keys()]))];
  const medianOf = (side: Map<string, number>[], name: string) => {
    const values = side.map((f) => f.get(name)).filter((v): v is number => v !== undefined);
    return values.length > 0 ? median(values) : undefined;
  };
  return names.map((name) => {
    const [a, b] = [medianOf(theirs, name), medianOf(ours, name)];
    const shown = (v: number | undefined) => (v === undefined ? '—' : v.toFixed(1));
    const ratio = a !== undefined && b !== undefined && a !== 0 ? (b / a).toFixed(2) : '—';
    return [name, shown(a), shown(b), ratio];
  });
}

function git(args: string[], cwd: string): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The other commit's checkout: a worktree in the temp folder sharing this checkout's node_modules. */
function otherCheckout(root: string, commit: string): { dir: string; sha: string } {
  const sha = git(['rev-parse', '--short=12', `${commit}^{commit}`], root);
  const dir = path.join(os.tmpdir(), `agent-bench-compare-${sha}`);
  if (!fs.existsSync(path.join(dir, 'package.json'))) {
    fs.rmSync(dir, { recursive: true, force: true });
    git(['worktree', 'add', '--detach', dir, sha], root);
  }
  const modules = path.join(dir, 'node_modules');
  if (!fs.existsSync(modules)) fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules')), modules);
  return { dir, sha };
}

/** One `npm run bench` in `dir` (which builds first), its progress passed through to stderr. */
function runBench(dir: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '-s', 'bench', '--', ...args], {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`npm run bench in ${dir} exited ${code}`)),
    );
  });
}

async function main(): Promise<void> {
  const opts = parseCompareArgs(process.argv.slice(2));
  const root = repoRoot();
  const other = otherCheckout(root, opts.commit);
  const thisSha = git(['rev-parse', '--short=12', 'HEAD'], root);
  const outDir = path.join(root, 'bench-results');
  const sides = [
    { name: `other-${other.sha}`, dir: other.dir, reports: [] as Report[] },
    { name: `this-${thisSha}`, dir: root, reports: [] as Report[] },
  ];
  for (let round = 1; round <= opts.rounds; round++) {
    for (const side of round % 2 === 1 ? sides : [...sides].reverse()) {
      const label = `${side.name}-r${round}`;
      console.error(`bench-compare: round ${round}/${opts.rounds}: ${label} (${side.dir})`);
      await runBench(side.dir, [
        '--quick',
        '--phases',
        opts.phases,
        '--label',
        label,
        '--out',
        outDir,
        ...opts.benchArgs,
      ]);
      side.reports.push(JSON.parse(fs.readFileSync(path.join(outDir, `bench-${label}.json`), 'utf8')) as Report);
    }
  }
  const loads = sides.flatMap((s) => s.reports.map((r) => `${r.conditions.loadStart}`.split(' ')[0]));
  const header = ['measure (median of the rounds)', `other (${other.sha})`, `this (${thisSha})`, 'this/other'];
  const rows = comparisonRows(sides[0]!.reports, sides[1]!.reports);
  const intro = `${opts.rounds} alternating round(s) of \`npm run bench -- --quick --phases ${opts.phases}\`; 1-minute load average at each bench's start: ${loads.join(', ')}`;
  console.log(`\n${intro}\n\n${textTable(header, rows)}`);
  const file = path.join(outDir, `compare-${other.sha}.md`);
  fs.writeFileSync(file, `# ${thisSha} against ${other.sha}\n\n${intro}.\n\n${markdownTable(header, rows)}\n`);
  console.log(`\nwritten: ${path.relative(process.cwd(), file)}`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(`bench-compare: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
