// The bench process itself: progress lines on stderr, and the children it forks, killed when it exits.
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

export const execFileP = promisify(execFile);
/** dist/, where the compiled bench, worker and CLI live. */
export const DIST = path.resolve(__dirname, '..');

export const t0 = Date.now();
export function progress(msg: string): void {
  process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);
}

export const sleep = (msec: number) => new Promise<void>((r) => setTimeout(r, msec));
export const children = new Set<ChildProcess>();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  // Exit through process.exit so the exit hooks below (and the dev server's) kill every child.
  process.once(signal, () => {
    progress(`${signal}: stopping`);
    process.exit(130);
  });
}
process.on('exit', () => {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {
      /* gone */
    }
  }
});
