// The CLI's cold start: how long `node dist/cli/cli.js <args>` takes from spawn to exit, as the
// median of several runs (each a new process: nothing is warm but the OS's file cache). The
// benchmark (bench/main.ts) prints it; alone:
//   node dist/bench/cli-start.js [--runs N] [-- list -o json]   (TEMPORAL_ADDRESS: a running server)
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { median, summarize } from './stats';
import type { Summary } from './stats';

export const CLI_ENTRY = path.resolve(__dirname, '..', 'cli', 'cli.js');
export const DEFAULT_CLI_ARGS: readonly string[] = ['list', '-o', 'json'];

export interface CliStartOptions {
  /** The command line after `agent` (default: list -o json, which connects and lists). */
  args?: readonly string[];
  /** How many processes to time (default 9; at least 7 for a median worth quoting). */
  runs?: number;
  /** The environment of each run (default: this process's): TEMPORAL_ADDRESS and so on. */
  env?: NodeJS.ProcessEnv;
  /** The CLI's entry file (default: this build's dist/cli/cli.js). */
  entry?: string;
}

export interface CliStartResult {
  args: readonly string[];
  /** Median wall time from spawn to exit, in ms. */
  medianMs: number;
  summary: Summary;
  samplesMs: number[];
}

/** Times `runs` cold starts of the CLI, one after the other; fails if one exits non-zero. */
export async function measureCliColdStart(opts: CliStartOptions = {}): Promise<CliStartResult> {
  const args = opts.args ?? DEFAULT_CLI_ARGS;
  const samplesMs: number[] = [];
  for (let i = 0; i < (opts.runs ?? 9); i++) samplesMs.push(await timeOnce(opts.entry ?? CLI_ENTRY, args, opts.env));
  return { args, medianMs: median(samplesMs), summary: summarize(samplesMs), samplesMs };
}

function timeOnce(entry: string, args: readonly string[], env = process.env): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let stderr = '';
    const child = spawn(process.execPath, [entry, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code === 0) resolve(ms);
      else reject(new Error(`agent ${args.join(' ')} exited ${code}: ${stderr.trim().split('\n')[0]}`));
    });
  });
}

if (require.main === module) {
  const { values, positionals } = parseArgs({
    options: { runs: { type: 'string', default: '9' } },
    allowPositionals: true,
  });
  measureCliColdStart({ runs: Number(values.runs), args: positionals.length > 0 ? positionals : undefined }).then(
    (r) =>
      console.log(
        `agent ${r.args.join(' ')}: cold start median ${r.medianMs.toFixed(0)} ms over ${r.samplesMs.length} runs (min ${r.summary.min.toFixed(0)}, max ${r.summary.max.toFixed(0)})`,
      ),
    (err: unknown) => {
      console.error(`bench-cli-start: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
